import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { port } from '../playwright.config';
import {
  buildImage,
  E2E_IMAGE,
  ensureToolsImage,
  podman,
  startComposeEngine,
} from '../scripts/container-image.mjs';
import { signInThenLoad } from './balancer-load';
import { requireTool } from './support';

/**
 * deploy/compose.yaml as someone trying replicas on one machine runs it, with docker-compose against
 * Podman's socket: Redis, the provider, three replicas and HAProxy, answering a sign-in and telemetry
 * through the balancer, and failing no request while a replica is stopped under load.
 */
requireTool('podman');
test.describe.configure({ mode: 'serial' });

const run = promisify(execFile);
const PROJECT = `gatehouse-e2e-${port(52)}`;
const ORIGIN = `http://localhost:${port(52)}`;
const PROVIDER = `http://localhost:${port(53)}`;

let engine: Awaited<ReturnType<typeof startComposeEngine>>;
let composeEnv: NodeJS.ProcessEnv;
const compose = (...args: string[]) =>
  run('docker-compose', ['--file', 'deploy/compose.yaml', '--project-name', PROJECT, ...args], {
    env: composeEnv,
    maxBuffer: 16 * 1024 * 1024,
  });

test.beforeAll(async () => {
  test.setTimeout(15 * 60_000);
  // Shared with container-image.spec.ts: built once per run, every layer reused.
  buildImage({ localBase: true, tag: E2E_IMAGE, log: (line) => console.info(line) });
  const tools = ensureToolsImage((line) => console.info(line));
  engine = await startComposeEngine();
  composeEnv = {
    ...engine.env,
    GATEHOUSE_IMAGE: E2E_IMAGE,
    GATEHOUSE_REDIS_IMAGE: tools,
    GATEHOUSE_HAPROXY_IMAGE: tools,
    GATEHOUSE_LB_PORT: String(port(52)),
    GATEHOUSE_IDP_PORT: String(port(53)),
    GATEHOUSE_REDIS_PORT: String(port(54)),
    GATEHOUSE_REPLICA_1_PORT: String(port(55)),
    GATEHOUSE_REPLICA_2_PORT: String(port(56)),
    GATEHOUSE_REPLICA_3_PORT: String(port(57)),
    // Under the 1024 open files the test machines grant a container.
    GATEHOUSE_LB_MAXCONN: '400',
    TELEMETRY_USER_ID_SECRET: randomBytes(32).toString('base64url'),
    GATEHOUSE_COLLECTOR_TOKEN: randomBytes(32).toString('base64url'),
  };
  await compose('down', '--volumes', '--timeout', '1').catch(() => undefined);
  const started = Date.now();
  await compose('up', '--detach');
  await expect
    .poll(async () => (await fetch(`${ORIGIN}/readyz`).catch(() => null))?.status, {
      timeout: 90_000,
      intervals: [200],
    })
    .toBe(200);
  console.info(`the balancer answered ${((Date.now() - started) / 1000).toFixed(1)} s after up`);
});

test.afterAll(async () => {
  if (composeEnv) await compose('down', '--volumes', '--timeout', '5').catch(() => undefined);
  await engine?.stop();
});

test('the compose file signs in and takes telemetry through the balancer, and a replica stopped under load fails no request', async ({
  page,
}) => {
  test.setTimeout(120_000);
  const load = await signInThenLoad(page, ORIGIN, PROVIDER, 'compose');
  // SIGTERM, as `docker compose stop` or a scale-down sends it: readiness fails, the balancer stops
  // sending, in-flight requests finish.
  await compose('stop', '--timeout', '20', 'gatehouse-3');
  const atStop = load.count;
  await expect.poll(() => load.count).toBeGreaterThan(atStop + 20);
  expect((await load.stop()).filter((status) => status !== 200)).toEqual([]);
  const { stdout } = await compose('ps');
  expect(stdout).toMatch(/gatehouse-3_1 .*Exit 0/);
  expect(
    podman(['ps', '--filter', `label=com.docker.compose.project=${PROJECT}`, '--format', '{{.Names}}']),
  ).toContain('gatehouse-1');
});

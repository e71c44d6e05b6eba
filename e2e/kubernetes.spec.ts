import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { selfSignedCertificate } from '../packages/collector/src/test-support/tls';
import { port } from '../playwright.config';
import {
  buildImage,
  E2E_IMAGE,
  ensurePauseImage,
  ensureToolsImage,
  podman,
  PODMAN,
  writeContainersConf,
} from '../scripts/container-image.mjs';
import { named, playOnOneHost, readManifests } from '../scripts/kubernetes-manifests.mjs';
import { signInThenLoad } from './balancer-load';
import { requireTool } from './support';

/**
 * deploy/kubernetes played by `podman kube play`: Redis, the store holder on its claimed volume and the
 * two replicas of the Deployment, with the manifests' settings, secrets (the test's), TLS between pods
 * and hardening, as Pods on the host's network (Podman 4.3 plays neither StatefulSets nor Services:
 * scripts/kubernetes-manifests.mjs turns the shipped objects into Pods), HAProxy in front of the pods the
 * Service selects and the bundled provider beside them. A sign-in and telemetry pass through the
 * balancer, and a replica stopped under load, as a node drain stops it, fails no request.
 */
requireTool('podman');
test.describe.configure({ mode: 'serial' });

const PROJECT = `gatehouse-kube-${port(58)}`;
const ORIGIN = `http://localhost:${port(58)}`;
const PROVIDER = `http://localhost:${port(59)}`;

const run = promisify(execFile);
const manifests = readManifests();
/** The replicas' grace period, as the kubelet would give it. */
const GRACE = named(manifests, 'Deployment', 'gatehouse').spec!.template!.spec.terminationGracePeriodSeconds!;

let dir = '';
let kubeFile = '';
let volumes: string[] = [];
let env: NodeJS.ProcessEnv = process.env;
const kube = (args: string[], timeout = 120_000) => podman(args, { env, timeout });

test.beforeAll(async () => {
  test.setTimeout(15 * 60_000);
  // Shared with the other container specs: built once per run, every layer reused.
  buildImage({ localBase: true, tag: E2E_IMAGE, log: (line) => console.info(line) });
  const tools = ensureToolsImage((line) => console.info(line));
  dir = mkdtempSync(join(tmpdir(), 'gatehouse-kube-'));
  env = { ...process.env, CONTAINERS_CONF: writeContainersConf(dir, { infraImage: ensurePauseImage() }) };

  // The gatehouse-internal-tls secret: one self-signed certificate for 127.0.0.1, its own CA.
  const tls = join(dir, 'tls');
  const haproxyDir = join(dir, 'haproxy');
  mkdirSync(tls);
  mkdirSync(haproxyDir);
  const certificate = selfSignedCertificate();
  for (const [file, from] of [
    ['tls.crt', certificate.certFile],
    ['ca.crt', certificate.certFile],
    ['tls.key', certificate.keyFile],
  ] as const) {
    copyFileSync(from, join(tls, file));
    // Read by the image's user and by Redis's, as a secret volume with the pod's fsGroup would allow.
    chmodSync(join(tls, file), 0o444);
  }
  certificate.remove();

  const played = playOnOneHost(manifests, {
    image: E2E_IMAGE,
    toolsImage: tools,
    port: (i) => port(60 + i),
    config: {
      PUBLIC_ORIGIN: ORIGIN,
      OIDC_AUTHORITY: PROVIDER,
      OIDC_AUDIENCE: `${ORIGIN}/api`,
      // The balancer connects from loopback.
      TRUST_PROXY: '127.0.0.1',
    },
    secrets: {
      TELEMETRY_USER_ID_SECRET: randomBytes(32).toString('hex'),
      COLLECTOR_TOKEN: randomBytes(32).toString('hex'),
      REDIS_PASSWORD: randomBytes(32).toString('hex'),
    },
    secretDirs: { 'gatehouse-internal-tls': tls },
    volumePrefix: PROJECT,
    service: 'gatehouse',
    idpPort: port(59),
    lbPort: port(58),
    haproxyDir,
  });
  expect(played.behind.map((pod) => pod.name)).toEqual(['gatehouse-0', 'gatehouse-1']);
  writeFileSync(join(haproxyDir, 'haproxy.cfg'), played.haproxyCfg, { mode: 0o644 });
  kubeFile = join(dir, 'gatehouse.yaml');
  writeFileSync(kubeFile, played.yaml);
  volumes = played.volumes;

  for (const volume of volumes) {
    try {
      kube(['volume', 'rm', '--force', volume]);
    } catch {
      // None left by an earlier run.
    }
    kube(['volume', 'create', volume]);
  }
  const started = Date.now();
  // --replace: pods an interrupted run left behind go first.
  kube(['kube', 'play', '--replace', kubeFile], 300_000);
  await expect
    .poll(async () => (await fetch(`${ORIGIN}/readyz`).catch(() => null))?.status, {
      timeout: 120_000,
      intervals: [250],
    })
    .toBe(200);
  console.info(`the balancer answered ${((Date.now() - started) / 1000).toFixed(1)} s after kube play`);
});

test.afterAll(() => {
  if (kubeFile) {
    try {
      kube(['kube', 'down', kubeFile]);
    } catch (error) {
      console.warn(`podman kube down: ${String(error)}`);
    }
  }
  for (const volume of volumes) {
    try {
      kube(['volume', 'rm', '--force', volume]);
    } catch {
      // Already gone.
    }
  }
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('the Kubernetes manifests sign in and take telemetry through the balancer, and a replica stopped under load fails no request', async ({
  page,
}) => {
  test.setTimeout(180_000);
  const load = await signInThenLoad(page, ORIGIN, PROVIDER, 'kubernetes');
  // SIGTERM, as a node drain or a scale-down sends it, with the manifest's grace period: readiness
  // fails, the balancer stops sending, in-flight requests finish.
  // Not blocking: the load goes on while the pod drains.
  await run('podman', [...PODMAN, 'pod', 'stop', '--time', String(GRACE), 'gatehouse-1'], { env });
  const atStop = load.count;
  await expect.poll(() => load.count).toBeGreaterThan(atStop + 20);
  expect((await load.stop()).filter((status) => status !== 200)).toEqual([]);
  expect(kube(['inspect', 'gatehouse-1-gatehouse', '--format', '{{.State.ExitCode}}']).trim()).toBe('0');
  expect(kube(['pod', 'ps', '--filter', 'status=running', '--format', '{{.Name}}'])).toContain(
    'gatehouse-store-0',
  );
});

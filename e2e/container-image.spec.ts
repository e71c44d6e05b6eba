import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { expect, test } from '@playwright/test';
import { port } from '../playwright.config';
import { buildImage, E2E_IMAGE, podman, runHardened, ULIMITS } from '../scripts/container-image.mjs';
import { ACCOUNTS, requireTool, signIn } from './support';
import { hidePage, recordTelemetry, waitForSdk, type Envelope } from './telemetry-support';

/**
 * The image as an operator runs it (Containerfile, docs/deploy.md): built with Podman from the locally
 * made base, started with a read-only root file system and a volume for its data, signed in to through
 * the bundled provider, sent telemetry, stopped with SIGTERM and started again, and every item found.
 */
requireTool('podman');
test.describe.configure({ mode: 'serial' });

const APP_PORT = port(74);
const IDP_PORT = port(75);
const ORIGIN = `http://localhost:${APP_PORT}`;
const PROVIDER = `http://localhost:${IDP_PORT}`;
const TAG = E2E_IMAGE;
const NAME = `gatehouse-e2e-${APP_PORT}`;
const VOLUME = `${NAME}-data`;

const quietly = (args: string[]) => {
  try {
    podman(args, { stdio: 'ignore' });
  } catch {
    // Nothing to remove.
  }
};
const removeContainer = () => {
  quietly(['rm', '--force', '--time', '0', NAME]);
  quietly(['volume', 'rm', '--force', VOLUME]);
};

/** Polls `url` until it answers 200; the seconds that took. */
async function untilAnswers(url: string, timeoutMs = 60_000): Promise<number> {
  const started = Date.now();
  await expect
    .poll(async () => (await fetch(url, { signal: AbortSignal.timeout(2_000) }).catch(() => null))?.status, {
      timeout: timeoutMs,
      intervals: [100],
    })
    .toBe(200);
  return (Date.now() - started) / 1000;
}

test.beforeAll(() => {
  // The first run on a machine makes the base (debootstrap, a few minutes); later runs reuse it, and the
  // build reuses its dependency layer until package-lock.json changes.
  test.setTimeout(15 * 60_000);
  const image = buildImage({ localBase: true, tag: TAG, log: (line) => console.info(line) });
  console.info(`${TAG}: ${(image.bytes / 1e6).toFixed(0)} MB, built in ${image.seconds.toFixed(1)} s`);
  removeContainer();
  podman(['volume', 'create', VOLUME], { stdio: 'ignore' });
});

test.afterAll(removeContainer);

test('the image signs in, keeps its telemetry across a restart, runs as no root and writes only its volume', async ({
  page,
}) => {
  test.setTimeout(180_000);
  runHardened({
    name: NAME,
    volume: VOLUME,
    image: TAG,
    env: {
      PORT: String(APP_PORT),
      IDP_PORT: String(IDP_PORT),
      PUBLIC_ORIGIN: ORIGIN,
      ALLOW_BUNDLED_DEV_IDP: '1',
      GATEHOUSE_SINGLE_REPLICA: '1',
      TELEMETRY_CONSENT: 'implied',
    },
  });
  const startSeconds = await untilAnswers(`${ORIGIN}/readyz`);
  console.info(`ready ${startSeconds.toFixed(1)} s after podman run`);
  expect(podman(['healthcheck', 'run', NAME]).trim()).toBe('');

  const telemetry = await recordTelemetry(page);
  await page.goto(ORIGIN);
  await signIn(page, ACCOUNTS.alice, PROVIDER);
  await waitForSdk(page);
  await hidePage(page);
  await expect.poll(() => telemetry.posts.filter((post) => post.status === 200).length).toBeGreaterThan(0);
  const fromBrowser = telemetry.posts.filter((post) => post.status === 200).flatMap((post) => post.envelopes);

  const names = Array.from({ length: 50 }, (_, i) => `container item ${i} ${Date.now()}`);
  const sent = await fetch(`${ORIGIN}/v2/track`, {
    method: 'POST',
    body: JSON.stringify(
      names.map((name) => ({
        time: new Date().toISOString(),
        iKey: LOCAL_INSTRUMENTATION_KEY,
        name: 'Microsoft.ApplicationInsights.Event',
        tags: { 'ai.session.id': 'container', 'ai.user.id': 'container-test' },
        data: { baseType: 'EventData', baseData: { ver: 2, name } },
      })),
    ),
  });
  expect(await sent.json()).toMatchObject({ itemsAccepted: names.length });

  const probe = `
    const fs = require('node:fs');
    const tries = {};
    for (const dir of ['/data', '/app', '/tmp', '/etc', '/']) {
      try { fs.writeFileSync(dir + '/.probe', 'x'); fs.rmSync(dir + '/.probe'); tries[dir] = 'written'; }
      catch (error) { tries[dir] = error.code; }
    }
    console.log(JSON.stringify({ uid: process.getuid(), gid: process.getgid(), tries }));`;
  const inside = JSON.parse(podman(['exec', NAME, 'node', '-e', probe])) as {
    uid: number;
    gid: number;
    tries: Record<string, string>;
  };
  expect(inside.uid).not.toBe(0);
  expect(inside.gid).not.toBe(0);
  expect(inside.tries).toEqual({
    '/data': 'written',
    '/app': 'EROFS',
    '/tmp': 'EROFS',
    '/etc': 'EROFS',
    '/': 'EROFS',
  });

  // SIGTERM drains and exits 0; started again on the same volume, the store opens with everything in it.
  podman(['stop', '--time', '30', NAME], { stdio: 'ignore' });
  expect(podman(['inspect', NAME, '--format', '{{.State.ExitCode}}']).trim()).toBe('0');
  podman(['start', NAME], { stdio: 'ignore' });
  await untilAnswers(`${ORIGIN}/readyz`);
  await page.goto(ORIGIN);
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  podman(['stop', '--time', '30', NAME], { stdio: 'ignore' });

  // DuckDB opens a store from one process at a time: the export runs once the server has stopped.
  const exported = podman([
    'run',
    '--rm',
    '--network',
    'none',
    '--read-only',
    ...ULIMITS,
    '--volume',
    `${VOLUME}:/data`,
    TAG,
    'node',
    'packages/collector/dist/cli/export.js',
  ])
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Envelope);
  const storedNames = new Set(exported.map((envelope) => envelope.data.baseData.name));
  expect(names.filter((name) => !storedNames.has(name))).toEqual([]);
  const storedTypes = new Set(exported.map((envelope) => envelope.data.baseType));
  expect(fromBrowser.filter((envelope) => !storedTypes.has(envelope.data.baseType))).toEqual([]);
});

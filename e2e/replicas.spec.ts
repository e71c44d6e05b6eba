import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { expect, test, type Page } from '@playwright/test';
import { clusterLayout, startCluster, type Cluster } from '../scripts/cluster.mjs';
import { ACCOUNTS, clusterSpec, logInAtProvider } from './support';
import { recordTelemetry, type Envelope } from './telemetry-support';
import { recordingProxy, type RecordingProxy } from './recording-proxy';

/**
 * Three replicas behind HAProxy, with Redis and one provider (scripts/cluster.mjs, ADR 0063): what an
 * operator runs, driven by a real browser through the balancer.
 */
const PORT_BASE = Number(process.env.E2E_PORT_BASE ?? 4100);
const RATE = 400;
let cluster: Cluster;
/**
 * In front of HAProxy, the cluster's public origin: what the browser sent, the token vault's API calls
 * from its worker included, and which replica answered each.
 */
let proxy: RecordingProxy;

clusterSpec(
  async () => {
    proxy = await recordingProxy();
    proxy.target(clusterLayout(PORT_BASE).origin);
    cluster = await startCluster({
      base: PORT_BASE,
      publicOrigin: proxy.origin,
      env: {
        TELEMETRY_CONSENT: 'implied',
        TELEMETRY_MAX_ITEMS_PER_SECOND: String(RATE),
        TELEMETRY_MAX_ITEMS_PER_SECOND_PER_SOURCE: '0',
      },
    });
  },
  async () => {
    await cluster?.stop();
    await proxy?.close();
  },
);

/** Asks the store holder directly (its internal API, with the token) what the dashboard's queries ask it. */
async function storedItems(userId: string): Promise<Envelope[]> {
  const res = await fetch(`${cluster.replicas[0]?.origin}/internal/usage/userItems`, {
    method: 'POST',
    headers: { authorization: `Bearer ${cluster.collectorToken}`, 'content-type': 'application/json' },
    body: JSON.stringify([userId]),
  });
  expect(res.status).toBe(200);
  const text = await res.text();
  return text
    ? text
        .trimEnd()
        .split('\n')
        .map((line) => JSON.parse(line) as Envelope)
    : [];
}

/** Every distinct item the browser sent (a resend is the same envelope) is stored, and each once. */
async function expectStoredOnce(sent: Envelope[]) {
  const distinct = new Set(sent.map((e) => JSON.stringify(e)));
  const userId = sent[0]?.tags['ai.user.id'] as string;
  await expect
    .poll(
      async () => {
        const stored = (await storedItems(userId)).map((e) => JSON.stringify(e));
        const counts = new Map<string, number>();
        for (const s of stored) counts.set(s, (counts.get(s) ?? 0) + 1);
        return {
          missing: [...distinct].filter((s) => !counts.has(s)).length,
          twice: [...counts.values()].filter((n) => n > 1).length,
        };
      },
      { timeout: 30_000 },
    )
    .toEqual({ missing: 0, twice: 0 });
}

async function signIn(page: Page) {
  await page.goto(cluster.origin);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await logInAtProvider(page, ACCOUNTS.admin, cluster.idp);
  await expect(page.getByTestId('display-name')).toHaveText(ACCOUNTS.admin.name);
}

/** Signed in through the balancer, on the page whose buttons call the API and send telemetry. */
async function openDiagnostics(page: Page) {
  await signIn(page);
  await page.getByRole('navigation').getByRole('link', { name: 'Diagnostics' }).click();
}

/** Which replica answered each API call from now on (HAProxy names it), and with what status. */
function recordApi() {
  const from = proxy.seen.length;
  return () =>
    proxy.seen
      .slice(from)
      .filter((r) => r.path.startsWith('/api/') && r.status !== undefined)
      .map((r) => ({
        path: r.path,
        status: r.status,
        replica: r.answerHeaders?.['x-gatehouse-replica'],
      }));
}

/** Clicks "Call the API" and resolves with the call of `/api/me` as the proxy saw it, once answered. */
async function callApi(page: Page) {
  const from = proxy.seen.length;
  await page.getByRole('button', { name: 'Call the API' }).click();
  const answered = () => proxy.seen.slice(from).find((r) => r.path === '/api/me' && r.status !== undefined);
  await expect.poll(() => answered()?.status).toBe(200);
  return answered()!;
}

test('a browser signs in through the balancer and uses the API on every replica; telemetry is stored once', async ({
  page,
}) => {
  const telemetry = await recordTelemetry(page);
  const calls = recordApi();
  await openDiagnostics(page);
  for (let i = 0; i < 6; i++) {
    await callApi(page);
    await page.getByRole('button', { name: 'Send an event' }).click();
  }
  // The dashboard: its queries are answered by the store holder, whichever replica the browser reached.
  await page.goto(`${cluster.origin}/usage`);
  await expect(page.getByRole('heading', { name: 'Usage', level: 1 })).toBeVisible();
  await expect(page.getByTestId('tile-users').locator('.tile-value')).not.toHaveText('');
  expect(calls().filter((c) => (c.status ?? 0) >= 400)).toEqual([]);
  expect(new Set(calls().map((c) => c.replica))).toEqual(new Set(cluster.replicas.map((r) => r.name)));
  await page.goto(`${cluster.origin}/`); // hands the last telemetry over
  expect(telemetry.ofType('EventData').length).toBeGreaterThanOrEqual(6);
  await expectStoredOnce(telemetry.envelopes());
});

test('a DPoP proof one replica accepted is refused by another', async ({ page }) => {
  await openDiagnostics(page);
  const call = await callApi(page);
  const other = cluster.replicas.find((r) => r.name !== call.answerHeaders?.['x-gatehouse-replica']);
  const replay = await fetch(`${other?.origin}/api/me`, {
    headers: { authorization: call.headers.authorization ?? '', dpop: String(call.headers.dpop ?? '') },
  });
  expect(replay.status).toBe(401);
  expect(replay.headers.get('www-authenticate')).toContain('invalid_dpop_proof');
});

test('the global rate limit holds across the replicas within one refill', async () => {
  const batch = (n: number) =>
    Array.from({ length: n }, (_, i) => ({
      time: new Date().toISOString(),
      iKey: LOCAL_INSTRUMENTATION_KEY,
      name: 'Microsoft.ApplicationInsights.Event',
      tags: { 'ai.session.id': 'rate', 'ai.user.id': 'rate-test' },
      data: { baseType: 'EventData', baseData: { ver: 2, name: `rate ${n} ${i} ${Math.random()}` } },
    }));
  const started = Date.now();
  // One batch of a whole second's worth to each replica, at once. Straight to each: the balancer's round
  // robin does not promise that three requests at once reach three replicas (under load two met one).
  const answers = await Promise.all(
    cluster.replicas.map(async (replica) => {
      const res = await fetch(`${replica.origin}/v2/track`, {
        method: 'POST',
        body: JSON.stringify(batch(RATE)),
      });
      // An empty 429: refused before its body was read (its source's buckets were empty).
      const text = await res.text();
      return {
        status: res.status,
        itemsAccepted: text ? (JSON.parse(text) as { itemsAccepted: number }).itemsAccepted : 0,
      };
    }),
  );
  const seconds = (Date.now() - started) / 1000;
  // Every replica answered: stored (200), in part (206) or refused for the rate (429).
  expect(answers.map((a) => [200, 206, 429].includes(a.status))).toEqual([true, true, true]);
  const accepted = answers.reduce((sum, a) => sum + a.itemsAccepted, 0);
  expect(accepted).toBeGreaterThan(0);
  // Per process, each replica would take a whole second's worth: three times the rate.
  expect(accepted).toBeLessThanOrEqual(RATE + Math.ceil(RATE * seconds));
});

test('a rolling restart (SIGTERM one at a time) under load fails no request and loses no item', async ({
  page,
}) => {
  // Three restarts, each waited for behind the balancer: over a minute on a busy 2-core machine.
  test.setTimeout(180_000);
  const telemetry = await recordTelemetry(page);
  const calls = recordApi();
  await openDiagnostics(page);

  let restarting = true;
  // A second steady load from outside the browser: the public API document, as fast as it answers.
  const outside: number[] = [];
  const outsideLoad = (async () => {
    while (restarting) {
      const res = await fetch(`${cluster.origin}/api/openapi.json`).catch(() => undefined);
      outside.push(res?.status ?? 0);
      await res?.arrayBuffer();
    }
  })();
  const browserLoad = (async () => {
    while (restarting) {
      await callApi(page);
      await page.getByRole('button', { name: 'Send an event' }).click();
    }
  })();

  for (const index of [1, 2, 0]) {
    const replica = cluster.replicas[index]!;
    expect(await cluster.stopReplica(index, 'SIGTERM')).toBe(0);
    await cluster.startReplica(index);
    // Back behind the balancer: it has answered a request again. Six at once, so that round robin hands
    // it one among the other loads' requests (one probe at a time, each landing on it one time in three,
    // missed it for the poll's 10 s in a CI run).
    await expect
      .poll(async () => {
        const answered = await Promise.all(
          Array.from({ length: 6 }, async () =>
            (await fetch(`${cluster.origin}/healthz`)).headers.get('x-gatehouse-replica'),
          ),
        );
        return answered.includes(replica.name);
      })
      .toBe(true);
  }
  restarting = false;
  await Promise.all([outsideLoad, browserLoad]);
  await page.goto(`${cluster.origin}/`);

  expect(outside.length).toBeGreaterThan(50);
  expect(outside.filter((status) => status !== 200)).toEqual([]);
  expect(calls().filter((c) => c.status !== 200)).toEqual([]);
  // Telemetry too: the forwarding replicas wait for the store holder while it restarts.
  expect(
    telemetry.posts.filter((p) => p.status !== undefined && p.status !== 200).map((p) => p.status),
  ).toEqual([]);
  // Every item the SDK was told was stored is stored, once (and the others arrive on their resend).
  const acknowledged = telemetry.posts.filter((p) => p.status === 200).flatMap((p) => p.envelopes);
  expect(acknowledged.length).toBeGreaterThan(0);
  await expectStoredOnce(telemetry.envelopes());
});

test('kill -9 of the store holder under ingest loses no acknowledged item; the rest arrive after', async ({
  page,
}) => {
  const telemetry = await recordTelemetry(page);
  await openDiagnostics(page);
  let ingesting = true;
  const load = (async () => {
    while (ingesting) {
      await page.getByRole('button', { name: 'Send an event' }).click();
      await page.getByRole('button', { name: 'Send a trace' }).click();
    }
  })();
  // Killed once the SDK has had items acknowledged; what it posts until the store holder is back is
  // either held by the other replicas (answered once stored) or refused with 503 and sent again.
  await expect.poll(() => telemetry.posts.filter((p) => p.status === 200).length).toBeGreaterThan(0);
  expect(await cluster.stopReplica(0, 'SIGKILL')).toBeNull();
  const postedBefore = telemetry.posts.length;
  await expect.poll(() => telemetry.posts.length, { timeout: 30_000 }).toBeGreaterThan(postedBefore);
  await cluster.startReplica(0);
  // Posted while the store holder was away: none of it could be acknowledged then.
  const unacknowledged = telemetry.posts.slice(postedBefore).flatMap((p) => p.envelopes);
  ingesting = false;
  await load;
  await page.goto(`${cluster.origin}/`);
  expect(unacknowledged.length).toBeGreaterThan(0);
  await expectStoredOnce(telemetry.envelopes());
});

test('Redis away degrades every replica without taking any out of the balancer', async () => {
  const redis = cluster.pids.redis;
  expect(redis).toBeDefined();
  const readiness = () =>
    Promise.all(
      cluster.replicas.map(async (r) => {
        const res = await fetch(`${r.origin}/readyz`);
        return { status: res.status, body: (await res.json()) as { status: string; checks: object } };
      }),
    );
  process.kill(redis as number, 'SIGSTOP');
  try {
    // Every replica says Redis fails, and stays ready: HAProxy routes on the status code.
    await expect.poll(readiness, { timeout: 15_000 }).toEqual(
      cluster.replicas.map(() => ({
        status: 200,
        body: expect.objectContaining({
          status: 'degraded',
          checks: expect.objectContaining({ redis: 'failing' }),
        }),
      })),
    );
    // What needs no Redis is served through the balancer, by the replicas themselves.
    for (let i = 0; i < 6; i++) {
      const res = await fetch(`${cluster.origin}/`);
      expect(res.status).toBe(200);
      expect(res.headers.get('x-gatehouse-replica')).toMatch(/^gatehouse-\d$/);
    }
  } finally {
    process.kill(redis as number, 'SIGCONT');
  }
  await expect
    .poll(async () => (await readiness()).map((r) => r.body.status), { timeout: 15_000 })
    .toEqual(cluster.replicas.map(() => 'ok'));
});

import { expect, test } from '@playwright/test';
import { ACCOUNTS, logInAtProvider, startServer, type StartedServer } from './support';
import { recordTelemetry, type Envelope } from './telemetry-support';
import { identity, startAzureStandIn } from './relay-support';

/*
 * The relay to Azure Monitor, proven without Azure: Gatehouse with TELEMETRY_RELAY takes the real
 * browser SDK's telemetry on its own origin and forwards it to a second Gatehouse collector playing the
 * ingestion endpoint, behind a proxy that refuses, throttles, takes only part of batches, and goes away
 * for ten seconds (E2E_RELAY_OUTAGE_SECONDS, 10 by default). The relay's back-off is capped at 2 s here
 * (from 1 s), so ten seconds see it reach its cap and retry at it several times; a longer outage adds
 * only waiting. Every item the relay acknowledged to the browser must reach the destination, and none
 * twice.
 */
const AZURE_IKEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const OUTAGE_MS = Number(process.env.E2E_RELAY_OUTAGE_SECONDS ?? 10) * 1000;

let azure: Awaited<ReturnType<typeof startAzureStandIn>>;
let server: StartedServer;

test.beforeAll(async () => {
  azure = await startAzureStandIn(AZURE_IKEY);
  server = await startServer(86, {
    TELEMETRY_CONSENT: 'implied',
    TELEMETRY_RELAY: 'true',
    APPLICATIONINSIGHTS_CONNECTION_STRING: `InstrumentationKey=${AZURE_IKEY};IngestionEndpoint=${azure.endpoint}`,
    // Back-off capped at 2 s, so the relay notices the endpoint is back within seconds.
    TELEMETRY_RELAY_MAX_RETRY_SECONDS: '2',
  });
});

test.afterAll(async () => {
  await server?.stop();
  await azure?.close();
});

/** The envelopes the collector acknowledged: all of a 200, those a 206 does not name. */
function acknowledged(posts: Awaited<ReturnType<typeof recordTelemetry>>['posts']): Envelope[] {
  return posts.flatMap((post) => {
    if (post.status === 200) return post.envelopes;
    if (post.status !== 206 || !post.answer) return [];
    const refused = new Set((post.answer.errors as { index: number }[]).map((e) => e.index));
    return post.envelopes.filter((_e, index) => !refused.has(index));
  });
}

test('every item the relay acknowledged reaches the endpoint exactly once, through refusals, throttling, 206 and an outage', async ({
  page,
}) => {
  test.setTimeout(OUTAGE_MS + 150_000);
  const telemetry = await recordTelemetry(page);
  const response = await page.goto(server.origin);
  // The CSP opens no ingestion host: the browser's telemetry stays on this origin ('self').
  const csp = (await response?.allHeaders())?.['content-security-policy'] ?? '';
  expect(csp).toMatch(/connect-src 'self'/);
  expect(csp).not.toContain(new URL(azure.endpoint).host);
  // The browser talks to this origin only: its runtime config names this origin as the endpoint.
  const config = JSON.parse((await page.locator('#gatehouse-config').textContent()) ?? '{}') as {
    telemetry: { connectionString: string };
  };
  expect(config.telemetry.connectionString).toBe(
    `InstrumentationKey=${AZURE_IKEY};IngestionEndpoint=${server.origin}/`,
  );
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await logInAtProvider(page, ACCOUNTS.admin, server.provider);
  await expect(page.getByTestId('display-name')).toHaveText('Ada Admin');

  // The load: the real SDK on real pages, each round's items leaving with the page-hide beacon.
  let loading = true;
  let rounds = 0;
  const load = (async () => {
    while (loading) {
      await page.goto(`${server.origin}/diagnostics`);
      for (const action of ['Send an event', 'Send a metric', 'Send a trace']) {
        for (let i = 0; i < 5; i++) await page.getByRole('button', { name: action }).click();
      }
      await page.goto(`${server.origin}/profile`);
      rounds++;
    }
  })();

  await azure.handled('pass', 2);
  azure.setMode('refuse');
  await azure.handled('refuse', 2);
  azure.setMode('throttle');
  await azure.handled('throttle', 2);
  azure.setMode('partial');
  await azure.handled('partial', 3);
  azure.setMode('pass');
  const before = telemetry.posts.length;
  await azure.goAway(OUTAGE_MS);
  // The browser went on being answered while the endpoint was away: the outbox took its items.
  const duringOutage = telemetry.posts.slice(before).filter((post) => post.status === 200);
  expect(duringOutage.length).toBeGreaterThan(0);
  await azure.handled('pass', azure.applied.pass + 2);
  loading = false;
  await load;
  await page.goto(`${server.origin}/api/openapi.json`); // the last page's beacon leaves

  const sent = acknowledged(telemetry.posts);
  const keys = new Set(sent.map((envelope) => identity(envelope as unknown as Record<string, unknown>)));
  await expect
    .poll(() => [...keys].filter((key) => !azure.taken.has(key)).length, { timeout: 60_000 })
    .toBe(0);
  // Acknowledged once journaled: the destination's store holds each of them once its load has run. Items
  // still reach the destination meanwhile (it takes more than the posts recorded here acknowledge: 1,336
  // against 1,212 in one run), so both counts are read at each look: a count of the taken ones read once,
  // before, fell behind the store's in one run (339 stored against 337).
  await expect
    .poll(
      async () => {
        const stored = await azure.stored();
        return `${stored} stored, ${azure.taken.size} taken`;
      },
      { timeout: 30_000 },
    )
    .toMatch(/^(\d+) stored, \1 taken$/);
  const twice = [...azure.taken].filter(([, count]) => count > 1);
  expect(twice).toEqual([]);
  console.info(
    `relay e2e: ${rounds} rounds, ${telemetry.posts.length} browser posts, ${keys.size} items acknowledged, ` +
      `${azure.taken.size} taken by the destination (each once), proxy: ${JSON.stringify(azure.applied)}, outage ${OUTAGE_MS} ms`,
  );
});

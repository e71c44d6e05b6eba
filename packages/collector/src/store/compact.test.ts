import { rmSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { validateEnvelope, type TelemetryItem } from '../protocol/envelopes.js';
import { createAnalyticsQueries } from '../analytics/product.js';
import { createUsageQueries } from '../analytics/usage.js';
import { startOfDay } from './compact.js';
import { openWritableStore, type WritableStore } from './store.js';
import { browserContext, browserEnvelope, type BrowserKind } from '../test-support/browser-envelopes.js';
import { tempDataDir } from '../test-support/server.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const NOW = Date.now();

/** A deterministic mix of kinds, users and sessions over the last 3 days (so two or three whole days before today). */
function mix(n: number, seed: number): TelemetryItem[] {
  let s = seed;
  const rand = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const kinds: BrowserKind[] = ['pageview', 'dependency', 'exception', 'event', 'trace'];
  return Array.from({ length: n }, (_, i) => {
    const c = browserContext({
      sessionId: `s${Math.floor(rand() * 20)}`,
      userId: `u${Math.floor(rand() * 8)}`,
    });
    const e = browserEnvelope(kinds[i % kinds.length]!, c, i) as { time: string };
    e.time = new Date(NOW - Math.floor(rand() * 3 * 24 * HOUR)).toISOString();
    const result = validateEnvelope(e, () => true);
    if (!result.ok) throw new Error(result.message);
    return result.item;
  });
}

/** What the dashboard shows over the 7 days, and every stored envelope, in an order of their own. */
async function answers(store: WritableStore) {
  const usage = createUsageQueries(store);
  const analytics = createAnalyticsQueries(store);
  const options = { range: '7d' as const, now: NOW };
  return {
    pages: await usage.pages(options),
    exceptions: await usage.exceptions(options),
    dependencies: await usage.dependencies(options),
    sessions: await usage.sessions(options),
    overview: await usage.overview(options),
    timeline: await usage.sessionTimeline('s3'),
    events: await analytics.customEvents(options),
    envelopes: (await store.read('SELECT envelope FROM items ORDER BY envelope')).map((r) => r.envelope),
  };
}

it('rewrites each whole day before today sorted by type, once, and every answer stays the same', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openWritableStore(dataDir, { load: { rows: 100, idleMs: 10, maxLagMs: 50 } });
  for (let i = 0; i < 4; i++) await store.append(mix(300, i + 1));
  await store.flush();
  const before = await answers(store);
  const days = await store.compact();
  expect(days).toBeGreaterThanOrEqual(2);
  expect(await answers(store)).toEqual(before);
  // Within each rewritten day, the rows are in (type, time) order; today's are as loaded.
  const today = new Date(startOfDay(NOW)).toISOString();
  const rows = await store.read(
    `SELECT date_trunc('day', time) < $1::TIMESTAMP AS done, type, epoch_ms(time)::DOUBLE AS t FROM items ORDER BY rowid`,
    [today],
  );
  const done = rows.filter((r) => r.done === true);
  expect(done.length).toBeGreaterThan(0);
  const key = (r: Record<string, unknown>) => `${String(r.type)}\u0000${String(r.t).padStart(16, '0')}`;
  for (let d = 0; d < 4; d++) {
    const day = done.filter((r) => startOfDay(Number(r.t)) === startOfDay(NOW) - (d + 1) * 24 * HOUR);
    expect(day.map(key)).toEqual(day.map(key).sort());
  }
  // Nothing is done twice; an item of a rewritten day arriving late is simply kept where it was loaded.
  expect(await store.compact()).toBe(0);
  const [late] = mix(1, 42);
  await store.append([{ ...late!, time: startOfDay(NOW) - HOUR }]);
  expect(await store.compact()).toBe(0);
  const [count] = await store.read('SELECT count(*)::DOUBLE AS n FROM items');
  expect(count!.n).toBe(1201);
  await store.close();
});

import { cpSync, rmSync } from 'node:fs';
import { afterAll, afterEach, beforeAll, expect, it } from 'vitest';
import type { DuckDBValue } from '@duckdb/node-api';
import { validateEnvelope, type TelemetryItem } from '../protocol/envelopes.js';
import { bucketedPeriod, period, ts, type UsageOptions } from '../analytics/sql.js';
import { EVENT_ESTIMATES, queryCustomEvents } from '../analytics/events.js';
import { EXPERIENCE_ESTIMATES, queryExperience } from '../analytics/experience.js';
import { FLOW_PATHS_LIMIT, queryUserFlows } from '../analytics/flows.js';
import { queryFunnel } from '../analytics/funnel.js';
import { vitalThresholds } from './vitals.js';
import { CALL_ESTIMATES, createUsageQueries, PAGE_ESTIMATES } from '../analytics/usage.js';
import { compactNextDay } from './compact.js';
import { PAGE_DAILY, USERS_ERROR } from './daily-sketch.js';
import { openWritableStore, storeFile, type WritableStore } from './store.js';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import { tempDataDir } from '../test-support/server.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const DAY = 24 * HOUR;
// Today's start: the views are spread over the five days before it (within the store's time window).
const TODAY = Math.floor(Date.now() / DAY) * DAY;
const HALF_BIN = Math.sqrt(1.05);
/** A custom period as the API takes it. */
const between = (from: number, to: number) => ({
  from: new Date(from).toISOString(),
  to: new Date(to).toISOString(),
});

/**
 * Page views over the five days before today: a busy page with many users (where the estimate is an
 * estimate), quieter ones, one seen by a single user only, views without a duration and without a name.
 * And calls: a busy one with a long tail, one that fails often, ones without a target, a name or a
 * duration, and one a user who viewed no page alone made. And custom events: a busy one with many users
 * and sessions, a nameless one, and one a user who did nothing else alone sent.
 */
function views(seed: number): TelemetryItem[] {
  // mulberry32: uniform enough for ten thousand users (an LCG in doubles repeats far sooner).
  let s = seed;
  const rand = () => {
    s = (s + 0x6d2b79f5) | 0;
    let t = Math.imul(s ^ (s >>> 15), 1 | s);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
  const result = validateEnvelope(
    browserEnvelope('pageview', browserContext({ sessionId: 's', userId: 'u' }), 0),
    () => true,
  );
  if (!result.ok) throw new Error(result.message);
  const base = result.item;
  const envelope = JSON.parse(base.envelope) as Record<string, unknown>;
  const items: TelemetryItem[] = [];
  const add = (
    name: string | null,
    user: string,
    durationMs: number | null,
    call?: { target: string | null; success: boolean | null } | 'event',
    session = `s-${user}`,
  ) =>
    items.push({
      ...base,
      ...(call === 'event'
        ? { type: 'event' as const }
        : call
          ? { type: 'dependency' as const, ...call }
          : {}),
      name,
      userId: user,
      sessionId: session,
      durationMs,
      time: TODAY - 5 * DAY + Math.floor(rand() * 5 * DAY),
      // Each its own item: the store keeps one of the same envelope's text (item-identity.ts).
      envelope: JSON.stringify({ ...envelope, seq: String(items.length) }),
    });
  for (let i = 0; i < 20_000; i++)
    add('Home', `u${Math.floor(rand() * 10_000)}`, Math.round(20 + rand() ** 3 * 5_000));
  for (let i = 0; i < 900; i++) add('Profile', `u${Math.floor(rand() * 150)}`, Math.round(50 + rand() * 400));
  for (let i = 0; i < 300; i++) add('Usage', `u${Math.floor(rand() * 40)}`, rand() < 0.2 ? null : 800);
  for (let i = 0; i < 30; i++) add(null, `u${Math.floor(rand() * 10)}`, 10);
  for (let i = 0; i < 7; i++) add('Secret', 'loner', 120);
  const call = (target: string | null, success: boolean | null = true) => ({ target, success });
  for (let i = 0; i < 12_000; i++)
    add(
      'GET /api/me',
      `u${i % 500}`,
      Math.round(5 + rand() ** 4 * 3_000),
      call('api.example', rand() > 0.01),
    );
  for (let i = 0; i < 800; i++)
    add('POST /api/pay', `u${i % 90}`, 200 + rand() * 50, call('pay', rand() > 0.3));
  for (let i = 0; i < 120; i++) add('GET /ping', `u${i % 9}`, rand() < 0.5 ? null : 3, call(null, null));
  for (let i = 0; i < 40; i++) add(null, `u${i % 9}`, 40 + i, call('api.example'));
  for (let i = 0; i < 5; i++) add('GET /secret', 'caller', 77, call('api.example', false));
  for (let i = 0; i < 15_000; i++) {
    const user = `u${Math.floor(rand() * 8_000)}`;
    add('Signed up', user, null, 'event', `${user}-${Math.floor(rand() * 3)}`);
  }
  for (let i = 0; i < 300; i++) add('Exported', `u${i % 70}`, null, 'event', `x${i % 110}`);
  for (let i = 0; i < 20; i++) add(null, `u${i % 4}`, null, 'event');
  for (let i = 0; i < 3; i++) add('Secret event', 'sender', null, 'event');
  // Web vitals, as the browser reports them (a metric named after the vital, the landing page in `page`).
  const vital = (name: string, page: string | undefined, value: number, user: string) =>
    items.push({
      ...base,
      type: 'metric' as const,
      name,
      userId: user,
      sessionId: `s-${user}`,
      durationMs: null,
      time: TODAY - 5 * DAY + Math.floor(rand() * 5 * DAY),
      envelope: JSON.stringify({
        ...envelope,
        seq: String(items.length),
        data: {
          baseType: 'MetricData',
          baseData: { metrics: [{ name, value, count: 1 }], properties: page === undefined ? {} : { page } },
        },
      }),
    });
  for (let i = 0; i < 3_000; i++) vital('LCP', 'Home', 200 + rand() ** 2 * 6_000, `u${i % 700}`);
  for (let i = 0; i < 1_000; i++) vital('CLS', 'Home', rand() ** 3 * 0.6, `u${i % 300}`);
  for (let i = 0; i < 500; i++) vital('INP', 'Profile', Math.round(16 + rand() * 700), `u${i % 100}`);
  for (let i = 0; i < 60; i++) vital('LCP', undefined, 1_000 + i * 50, `u${i % 7}`);
  // Not a web vital: no sketch row.
  for (let i = 0; i < 40; i++) vital('queue length', 'Home', i, `u${i % 7}`);
  for (let i = 0; i < 4; i++) vital('LCP', 'Secret', 9_000, 'loner');
  return items;
}

const BIN_LN = Math.log(1.05);
/** The middle of the bin holding a vital's `value` (CLS in thousandths), as daily-sketch.ts's binSql. */
function binMiddle(name: string, value: number) {
  const scale = name === 'CLS' ? 1000 : 1;
  const bin = Math.floor(Math.log(1 + Math.max(value * scale, 0)) / BIN_LN);
  return (Math.exp((bin + 0.5) * BIN_LN) - 1) / scale;
}

/**
 * The 30-day Experience answer as of `now` (whole days from the sketches) agrees with the items: the
 * counts and the good and poor shares exactly; each p75, overall, per page and per day of the chart, is
 * the middle of the bin holding the value at its rank.
 */
async function expectVitalsWithinBounds(store: WritableStore, now: number) {
  const answer = await queryExperience(store, { range: '30d', now });
  expect(answer.estimates).toEqual(EXPERIENCE_ESTIMATES);
  const p = period({ range: '30d', now });
  const chart = bucketedPeriod({ range: '30d', now });
  const truth = await store.read(
    `SELECT name, coalesce(metric_page, '') AS page, GROUPING(page)::INTEGER AS all_pages, count(*)::DOUBLE AS n,
       list_sort(list(metric_value)) AS values
     FROM items WHERE type = 'metric' AND name IN ('LCP', 'INP', 'CLS', 'FCP', 'TTFB')
       AND time >= $1 AND time < $2 GROUP BY GROUPING SETS ((name, page), (name))`,
    [ts(p.from), ts(p.to)],
  );
  expect(truth.length).toBeGreaterThan(4);
  const atRank = (values: number[]) => values[Math.ceil(0.75 * values.length) - 1]!;
  for (const t of truth) {
    const name = String(t.name) as 'LCP' | 'INP' | 'CLS';
    const summary =
      t.all_pages === 1 ? answer.overall[name] : answer.pages.find((x) => x.page === t.page)?.vitals[name];
    const values = list(t.values);
    const { good, poor } = vitalThresholds[name];
    expect(summary).toMatchObject({
      count: values.length,
      good: values.filter((v) => v <= good).length / values.length,
      poor: values.filter((v) => v > poor).length / values.length,
    });
    expect(summary!.p75! / binMiddle(name, atRank(values))).toBeCloseTo(1, 9);
  }
  const days = await store.read(
    `SELECT name, ((epoch_ms(time) - $3::BIGINT) // ${DAY})::DOUBLE AS bucket, list_sort(list(metric_value)) AS values
     FROM items WHERE type = 'metric' AND name IN ('LCP', 'INP', 'CLS', 'FCP', 'TTFB')
       AND time >= $1 AND time < $2 GROUP BY ALL`,
    [ts(chart.from), ts(chart.to), chart.from],
  );
  expect(answer.trend.filter((b) => b.p75.LCP !== null)).toHaveLength(
    days.filter((d) => d.name === 'LCP').length,
  );
  for (const d of days) {
    const name = String(d.name) as 'LCP' | 'INP' | 'CLS';
    const p75 = answer.trend[Number(d.bucket)]!.p75[name];
    expect(p75! / binMiddle(name, atRank(list(d.values)))).toBeCloseTo(1, 9);
  }
  return answer;
}

/** The Pages panel's figures straight from the items, exactly; the durations sorted, per page. */
async function exact(store: WritableStore, from: number, to: number) {
  const values: DuckDBValue[] = [ts(from), ts(to)];
  const rows = await store.read(
    `SELECT coalesce(name, '') AS name, count(*)::DOUBLE AS views, count(DISTINCT user_id)::DOUBLE AS users,
       avg(duration_ms) AS avg_ms, list_sort(list(duration_ms) FILTER (WHERE duration_ms IS NOT NULL)) AS durations
     FROM items WHERE type = 'pageview' AND time >= $1 AND time < $2 GROUP BY 1 ORDER BY views DESC, name`,
    values,
  );
  return rows.map((r) => ({
    name: String(r.name),
    views: Number(r.views),
    users: Number(r.users),
    avg: r.avg_ms === null ? null : Number(r.avg_ms),
    durations: (r.durations as { items: number[] } | number[] | null) ?? [],
  }));
}

const list = (v: unknown): number[] =>
  Array.isArray(v) ? (v as number[]) : ((v as { items?: number[] })?.items ?? []);

/** Whether `estimate` is the value at `quantile`'s rank of the sorted `durations`, to half a bin. */
function expectQuantile(estimate: number | null, durations: number[], quantile: number) {
  if (durations.length === 0) return expect(estimate).toBeNull();
  // The value at the rank is in the estimate's bin: at or below its top are at least that share of the
  // durations, below its bottom fewer.
  const atOrBelow = durations.filter((d) => d <= estimate! * HALF_BIN * 1.000001).length;
  const below = durations.filter((d) => d < (estimate! / HALF_BIN) * 0.999999).length;
  expect(atOrBelow / durations.length).toBeGreaterThanOrEqual(quantile);
  expect(below / durations.length).toBeLessThan(quantile);
}

/** The Custom events panel from the sketches agrees with the items: counts exactly, users and sessions within bounds. */
async function expectEventsWithinBounds(store: WritableStore, from: number, to: number) {
  const answer = await queryCustomEvents(store, between(from, to));
  expect(answer.estimates).toEqual(EVENT_ESTIMATES);
  const truth = await store.read(
    `SELECT coalesce(name, '') AS name, count(*)::DOUBLE AS n, count(DISTINCT user_id)::DOUBLE AS users,
       count(DISTINCT session_id)::DOUBLE AS sessions
     FROM items WHERE type = 'event' AND time >= $1 AND time < $2 GROUP BY 1 ORDER BY n DESC, name`,
    [ts(from), ts(to)],
  );
  expect(answer.events.map((e) => [e.name, e.count])).toEqual(truth.map((t) => [t.name, t.n]));
  for (const [i, t] of truth.entries()) {
    const row = answer.events[i]!;
    for (const field of ['users', 'sessions'] as const)
      expect(Math.abs(row[field] - Number(t[field]))).toBeLessThanOrEqual(
        Math.max(1, 3 * USERS_ERROR * Number(t[field])),
      );
  }
  return answer;
}

/** The Calls panel from the sketches agrees with the items: counts and failures exactly, p50 and p95 within bounds. */
async function expectCallsWithinBounds(store: WritableStore, from: number, to: number) {
  const answer = await createUsageQueries(store).dependencies(between(from, to));
  expect(answer.estimates).toEqual(CALL_ESTIMATES);
  const truth = await store.read(
    `SELECT target, name, count(*)::DOUBLE AS n, count(*) FILTER (WHERE success = false)::DOUBLE AS failures,
       list_sort(list(duration_ms) FILTER (WHERE duration_ms IS NOT NULL)) AS durations
     FROM items WHERE type = 'dependency' AND time >= $1 AND time < $2
     GROUP BY target, name ORDER BY n DESC, target, name`,
    [ts(from), ts(to)],
  );
  expect(answer.dependencies.map((d) => [d.target, d.name, d.count, d.failures])).toEqual(
    truth.map((t) => [t.target, t.name, t.n, t.failures]),
  );
  for (const [i, t] of truth.entries()) {
    const row = answer.dependencies[i]!;
    expectQuantile(row.p50DurationMs, list(t.durations), 0.5);
    expectQuantile(row.p95DurationMs, list(t.durations), 0.95);
  }
  return answer;
}

/**
 * The User flows around each page over [from, to) are the page views' own, counted here one by one: per
 * session and UTC day, in time order (then by name), each view of the page with the pages before and
 * after it. Every count exact; the paths listed are the most common (any left out counts no more than
 * the least listed).
 */
async function expectFlowsExact(store: WritableStore, from: number, to: number) {
  const rows = await store.read(
    `SELECT session_id, epoch_ms(time)::DOUBLE AS t, name FROM items
     WHERE type = 'pageview' AND name IS NOT NULL AND session_id IS NOT NULL AND time >= $1 AND time < $2`,
    [ts(from), ts(to)],
  );
  const visits = new Map<string, { t: number; name: string }[]>();
  for (const r of rows) {
    const key = `${String(r.session_id)}\n${Math.floor(Number(r.t) / DAY)}`;
    if (!visits.has(key)) visits.set(key, []);
    visits.get(key)!.push({ t: Number(r.t), name: String(r.name) });
  }
  const sequences = [...visits.values()].map((visit) =>
    visit.sort((x, y) => x.t - y.t || (x.name < y.name ? -1 : x.name > y.name ? 1 : 0)).map((v) => v.name),
  );
  for (const page of ['Home', 'Profile', 'Usage']) {
    const counts = { views: 0, entries: 0, exits: 0 };
    const ways = { next1: [1], next2: [1, 2], previous1: [-1], previous2: [-2, -1] } as const;
    const truth = Object.fromEntries(Object.keys(ways).map((way) => [way, new Map<string, number>()]));
    for (const names of sequences)
      names.forEach((name, i) => {
        if (name !== page) return;
        counts.views++;
        if (i === 0) counts.entries++;
        if (i === names.length - 1) counts.exits++;
        for (const [way, steps] of Object.entries(ways)) {
          const path = steps.map((step) => names[i + step]);
          if (path.some((p) => p === undefined)) continue;
          const key = path.join('\n');
          truth[way]!.set(key, (truth[way]!.get(key) ?? 0) + 1);
        }
      });
    const answer = await queryUserFlows(store, page, between(from, to));
    expect(answer).toMatchObject(counts);
    for (const way of Object.keys(ways) as (keyof typeof ways)[]) {
      const listed = answer[way];
      expect(listed).toHaveLength(Math.min(FLOW_PATHS_LIMIT, truth[way]!.size));
      for (const path of listed) expect(path.count).toBe(truth[way]!.get(path.pages.join('\n')));
      const least = Math.min(...listed.map((path) => path.count));
      const keys = new Set(listed.map((path) => path.pages.join('\n')));
      for (const [key, n] of truth[way]!) if (!keys.has(key)) expect(n).toBeLessThanOrEqual(least);
    }
  }
}

/** The sketched answer agrees with the items: views and averages exactly, users and p95 within bounds. */
async function expectWithinBounds(store: WritableStore, from: number, to: number) {
  const usage = createUsageQueries(store);
  const answer = await usage.pages(between(from, to));
  expect(answer.estimates).toEqual(PAGE_ESTIMATES);
  const truth = await exact(store, from, to);
  expect(answer.pages.map((p) => [p.name, p.views])).toEqual(truth.map((t) => [t.name, t.views]));
  for (const [i, t] of truth.entries()) {
    const page = answer.pages[i]!;
    if (t.avg === null) expect(page.avgDurationMs).toBeNull();
    else expect(page.avgDurationMs).toBeCloseTo(t.avg, 6);
    // Within three standard errors (all but 3 in 1,000 estimates), and nearly exact when small.
    expect(Math.abs(page.users - t.users)).toBeLessThanOrEqual(Math.max(1, 3 * USERS_ERROR * t.users));
    expectQuantile(page.p95DurationMs, list(t.durations), 0.95);
  }
  await expectCallsWithinBounds(store, from, to);
  await expectEventsWithinBounds(store, from, to);
  await expectVitalsWithinBounds(store, to);
  await expectFlowsExact(store, from, to);
  return answer;
}

/** Small loads, so a day's page and register have rows from several loads. */
const smallLoads = { load: { rows: 500, idleMs: 10, maxLagMs: 50 } };

async function opened() {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  return { dataDir, store: await openWritableStore(dataDir, smallLoads) };
}

/** Appends in several loads, so that a day's page and register have rows from several. */
async function appendInLoads(store: WritableStore, items: TelemetryItem[]) {
  for (let i = 0; i < items.length; i += 2_000) {
    await store.append(items.slice(i, i + 2_000));
    await store.flush();
  }
}

/**
 * The five days' items (views(1)) loaded once for the file: the load is most of a test's time. A test
 * that only reads uses `loaded`; one that closes the store to change its file takes it with `take`, and
 * hands back what it reopened (the same items, its keys computed again) with `handBack`; one that fails
 * meanwhile leaves the next to load its own. No day compaction while the store is shared: a test
 * comparing two answers would see the averages' sums added up in another order.
 */
let sharedLoad: Promise<{ dataDir: string; store: WritableStore }> | undefined;
const reopenShared = (dataDir: string) => openWritableStore(dataDir, { compactEveryMs: 0 });
function loaded() {
  sharedLoad ??= (async () => {
    const dataDir = tempDataDir();
    const store = await openWritableStore(dataDir, { ...smallLoads, compactEveryMs: 0 });
    await appendInLoads(store, views(1));
    return { dataDir, store };
  })();
  return sharedLoad;
}
/** A copy of the loaded items' folder, open with small loads, for a test that erases, prunes and compacts. */
async function copyOfLoaded() {
  const { dataDir, store } = await take();
  await store.close();
  const copy = tempDataDir();
  dirs.push(copy);
  cpSync(dataDir, copy, { recursive: true });
  handBack(dataDir, await reopenShared(dataDir));
  return { dataDir: copy, store: await openWritableStore(copy, smallLoads) };
}
async function take() {
  const taken = await loaded();
  sharedLoad = undefined;
  return taken;
}
function handBack(dataDir: string, store: WritableStore) {
  sharedLoad = Promise.resolve({ dataDir, store });
}
// Loaded before the tests, with a time of its own: a test's own time stays what it was.
beforeAll(async () => {
  await loaded();
}, 300_000);
afterAll(async () => {
  const left = await sharedLoad;
  await left?.store.close();
  if (left) rmSync(left.dataDir, { recursive: true, force: true });
});

// From the middle of a day to the middle of another: whole days from the sketches, the ends from the items.
const FROM = TODAY - 5 * DAY + 7 * HOUR;
const TO = TODAY - DAY + 13 * HOUR;

it('answers a long period from the daily sketches: views and averages exact, users and p95 within their bounds', async () => {
  const { store } = await loaded();
  const answer = await expectWithinBounds(store, FROM, TO);
  // The busy page has more users than the sketch has registers: HyperLogLog's own estimate, not its
  // linear counting of empty registers.
  expect(answer.pages[0]!.name).toBe('Home');
  expect(answer.pages[0]!.users).toBeGreaterThan(2.5 * 2_048);
  // The one-user page is counted exactly.
  expect(answer.pages.find((p) => p.name === 'Secret')?.users).toBe(1);

  // A short period or a segment reads the items, and says that every figure is exact.
  const usage = createUsageQueries(store);
  const short = await usage.pages(between(TODAY - 2 * DAY + HOUR, TODAY - DAY + HOUR));
  expect(short.estimates).toEqual([]);
  const day = await exact(store, TODAY - 2 * DAY + HOUR, TODAY - DAY + HOUR);
  expect(short.pages.map((p) => [p.name, p.views, p.users])).toEqual(
    day.map((t) => [t.name, t.views, t.users]),
  );
  const segmented = await usage.pages({ ...between(FROM, TO), browser: 'Chrome' });
  expect(segmented.estimates).toEqual([]);
  const shortCalls = await usage.dependencies(between(TODAY - 2 * DAY + HOUR, TODAY - DAY + HOUR));
  expect(shortCalls.estimates).toEqual([]);
  expect((await usage.dependencies({ ...between(FROM, TO), browser: 'Chrome' })).estimates).toEqual([]);
  const shortEvents = await queryCustomEvents(store, between(TODAY - 2 * DAY + HOUR, TODAY - DAY + HOUR));
  expect(shortEvents.estimates).toEqual([]);
  // The web vitals: a week (6-hour buckets), a segment, or day-wide buckets the last of which is cut at
  // noon read the items, exactly; midnight to midnight, the sketches.
  for (const options of [
    { range: '7d', now: TO },
    { range: '30d', now: TO, browser: 'Chrome' },
    between(TODAY - 20 * DAY, TODAY - DAY + 12 * HOUR),
  ] as const)
    expect((await queryExperience(store, options)).estimates).toEqual([]);
  expect((await queryExperience(store, between(TODAY - 20 * DAY, TODAY))).estimates).toEqual(
    EXPERIENCE_ESTIMATES,
  );
  // The erased user's page is among the sketched ones before the erasure (the next test's).
  const vitals = await expectVitalsWithinBounds(store, TO);
  expect(vitals.pages.map((x) => x.page)).toEqual(expect.arrayContaining(['Home', 'Profile', '', 'Secret']));
  // The busy event's users and sessions are past linear counting: HyperLogLog's own estimate.
  const events = await queryCustomEvents(store, between(FROM, TO));
  expect(events.events[0]).toMatchObject({ name: 'Signed up' });
  expect(events.events[0]!.sessions).toBeGreaterThan(2.5 * 2_048);
  expect(events.events.find((e) => e.name === 'Secret event')).toMatchObject({ users: 1, sessions: 1 });
}, 60_000);

it('keeps the sketches true through an erasure, a prune and a day compaction, and computes them for an older store', async () => {
  const { dataDir, store } = await copyOfLoaded();
  // Each load added its own rows for a day's pages; a compaction writes them again once (below).
  const day = TODAY - 3 * DAY;
  const rowsOf = async () =>
    Number(
      (await store.read(`SELECT count(*)::DOUBLE AS n FROM ${PAGE_DAILY} WHERE day = $1`, [ts(day)]))[0]!.n,
    );
  expect(await rowsOf()).toBeGreaterThan(5);
  await expectWithinBounds(store, FROM, TO);

  // Erased: the only user of a page takes it off the list, and their views off every count; the only
  // maker of a call, who viewed no page, takes it off the Calls panel.
  expect(await store.erase('loner')).toBe(7 + 4);
  expect(await store.erase('caller')).toBe(5);
  expect(await store.erase('sender')).toBe(3);
  const afterErasure = await expectWithinBounds(store, FROM, TO);
  expect(afterErasure.pages.map((p) => p.name)).not.toContain('Secret');
  const callsAfter = await createUsageQueries(store).dependencies(between(FROM, TO));
  expect(callsAfter.dependencies.map((d) => d.name)).not.toContain('GET /secret');
  const eventsAfter = await queryCustomEvents(store, between(FROM, TO));
  expect(eventsAfter.events.map((e) => e.name)).not.toContain('Secret event');
  const vitalsAfter = await queryExperience(store, { range: '30d', now: TO });
  expect(vitalsAfter.pages.map((x) => x.page)).not.toContain('Secret');

  // Pruned inside a day: that day's sketches are computed again from what is left of it (read as a
  // whole day of the period here), the days before it gone.
  expect(await store.prune(TODAY - 4 * DAY + 5 * HOUR)).toBeGreaterThan(0);
  await expectWithinBounds(store, TODAY - 4 * DAY, TO);
  expect(
    (
      await store.read(`SELECT count(*)::DOUBLE AS n FROM ${PAGE_DAILY} WHERE day < $1`, [
        ts(TODAY - 4 * DAY),
      ])
    )[0]!.n,
  ).toBe(0);

  // Compacted, the answers unchanged (the averages' sums may add up in another order: to a rounding).
  const figures = (answer: Awaited<ReturnType<ReturnType<typeof createUsageQueries>['pages']>>) =>
    answer.pages.map((p) => ({ ...p, avgDurationMs: p.avgDurationMs?.toFixed(6) }));
  const before = figures(await createUsageQueries(store).pages(between(FROM, TO)));
  const callsBefore = await createUsageQueries(store).dependencies(between(FROM, TO));
  await store.close();

  const { DuckDBInstance } = await import('@duckdb/node-api');
  const raw = await DuckDBInstance.create(storeFile(dataDir));
  const c = await raw.connect();
  while ((await compactNextDay(c, day + DAY)) !== null);
  const dayRows = async (table: string) =>
    Number(
      (await c.runAndReadAll(`SELECT count(*) FROM ${table} WHERE day = $1`, [ts(day)])).getRows()[0]![0],
    );
  // One row a page name: Home, Profile, Usage and '' (none; the erased user's page is gone).
  expect(await dayRows(PAGE_DAILY)).toBe(4);
  // One row a call: the api, the payment, the ping and the nameless (the erased user's is gone).
  expect(await dayRows('call_daily')).toBe(4);
  c.closeSync();
  raw.closeSync();
  /** Runs `sql` on the closed store, as an older version or another DuckDB would have left it. */
  const alter = async (sql: string) => {
    const instance = await DuckDBInstance.create(storeFile(dataDir));
    const connection = await instance.connect();
    await connection.run(sql);
    connection.closeSync();
    instance.closeSync();
  };
  // Sketches made with another hash (a DuckDB whose hash differs): computed again when it opens.
  await alter('UPDATE page_sketch_hash SET canary = 0; DELETE FROM page_daily_users');
  const rehashed = await openWritableStore(dataDir);
  expect(figures(await createUsageQueries(rehashed).pages(between(FROM, TO)))).toEqual(before);
  await expectFlowsExact(rehashed, FROM, TO);
  await rehashed.close();
  // An older store: no sketches at all until it is opened.
  await alter(
    'DROP TABLE page_daily; DROP TABLE page_daily_users; DROP TABLE page_daily_durations; DROP TABLE page_sketch_hash',
  );
  const reopened = await openWritableStore(dataDir);
  expect(figures(await createUsageQueries(reopened).pages(between(FROM, TO)))).toEqual(before);
  const eventsBefore = await queryCustomEvents(reopened, between(FROM, TO));
  await reopened.close();
  // A store made when only the pages had sketches: the calls' and events' are computed when it opens.
  await alter(
    'DROP TABLE call_daily; DROP TABLE call_daily_durations; DROP TABLE event_daily; DROP TABLE event_daily_users; DROP TABLE event_daily_sessions',
  );
  const upgraded = await openWritableStore(dataDir);
  expect(await createUsageQueries(upgraded).dependencies(between(FROM, TO))).toEqual(callsBefore);
  expect(await queryCustomEvents(upgraded, between(FROM, TO))).toEqual(eventsBefore);
  await expectCallsWithinBounds(upgraded, FROM, TO);
  await expectEventsWithinBounds(upgraded, FROM, TO);
  await upgraded.close();
}, 60_000);

/** The store as a DuckDB that hashes otherwise leaves it: the keys' canary differs, `keys` (an UPDATE's SET) wrong. */
async function spoilKeys(dataDir: string, keys: string) {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const raw = await DuckDBInstance.create(storeFile(dataDir));
  const c = await raw.connect();
  await c.run(`UPDATE name_key_hash SET canary = 0; UPDATE items SET ${keys}`);
  c.closeSync();
  raw.closeSync();
}

it('groups the page views by their name key as by their names, and by their names when a page has none', async () => {
  const { store } = await opened();
  const all = views(4).filter((i) => i.type === 'pageview');
  await appendInLoads(
    store,
    all.filter((i) => i.name !== null),
  );
  const sql: string[] = [];
  // The store's reader; `ambiguous` forces the answer of the check for pages without a name or sharing a key.
  const usage = (ambiguous?: number) =>
    createUsageQueries({
      export: (options) => store.export(options),
      erase: (target) => store.erase(target),
      read: (text, values) => {
        sql.push(text);
        return ambiguous !== undefined && text.includes("FILTER (WHERE name = '')")
          ? store.read(text, values).then(([plan]) => [{ ...plan, ambiguous }])
          : store.read(text, values);
      },
    });
  const short = between(TODAY - 2 * DAY + HOUR, TODAY - DAY + HOUR);
  const periods: UsageOptions[] = [
    short,
    { ...between(FROM, TO), browser: 'Chrome' },
    { ...short, auth: 'anonymous' },
  ];
  for (const options of periods) {
    const byKey = await usage().pages(options);
    expect(sql.at(-1)).toContain('GROUP BY name_key');
    expect(byKey.pages.length).toBeGreaterThan(2);
    const byName = await usage(1).pages(options);
    expect(sql.at(-1)).not.toContain('name_key');
    expect(byName).toEqual(byKey);
  }
  const named = await usage().pages(short);
  const truth = await exact(store, TODAY - 2 * DAY + HOUR, TODAY - DAY + HOUR);
  expect(named.pages.map((p) => [p.name, p.views, p.users])).toEqual(
    truth.map((t) => [t.name, t.views, t.users]),
  );

  // Page views without a name, and one named '': the Pages panel shows them as one page, '' (by key they
  // would be two, and the names' list has '' for both), so the page views are grouped by their names.
  const nameless = all.filter((i) => i.name === null);
  await appendInLoads(store, [
    ...nameless,
    { ...nameless[0]!, name: '', envelope: `${nameless[0]!.envelope} ` },
  ]);
  const withNameless = await usage().pages(short);
  expect(sql.at(-1)).not.toContain('name_key');
  const truthNow = await exact(store, TODAY - 2 * DAY + HOUR, TODAY - DAY + HOUR);
  expect(truthNow.some((t) => t.name === '')).toBe(true);
  expect(withNameless.pages.map((p) => [p.name, p.views, p.users])).toEqual(
    truthNow.map((t) => [t.name, t.views, t.users]),
  );
  await store.close();
}, 60_000);

it("groups the web vitals by their page's key as by its text, and keys computed again when DuckDB's hash changes", async () => {
  const { dataDir, store } = await take();
  const sql: string[] = [];
  // The store's reader; `shared` forces the answer of the check for two pages sharing a key.
  const reader = (shared?: number) => ({
    read: (text: string, values?: DuckDBValue[]) => {
      sql.push(text);
      return shared !== undefined && text.includes('count(DISTINCT key)')
        ? Promise.resolve([{ n: shared }])
        : store.read(text, values);
    },
  });
  const periods = [
    { range: '30d', now: TO, browser: 'Chrome' },
    { range: '7d', now: TO },
    between(TODAY - 20 * DAY, TODAY - DAY + 12 * HOUR),
  ] as const;
  const byKey = [];
  for (const options of periods) {
    const answer = await queryExperience(reader(), options);
    expect(sql.at(-1)).toContain('metric_page_key');
    // The pages with a vital, the one without a page ('') among them.
    expect(answer.pages.map((p) => p.page)).toEqual(expect.arrayContaining(['', 'Home', 'Profile']));
    const byText = await queryExperience(reader(1), options);
    expect(sql.at(-1)).not.toContain('metric_page_key');
    expect(byText).toEqual(answer);
    byKey.push(answer);
  }
  await store.close();

  // A DuckDB that hashes otherwise: the page keys are computed again when it opens.
  await spoilKeys(dataDir, 'metric_page_key = 1');
  const reopened = await reopenShared(dataDir);
  for (const [i, options] of periods.entries())
    expect(await queryExperience(reopened, options)).toEqual(byKey[i]);
  handBack(dataDir, reopened);
}, 60_000);

it("finds a funnel's steps by their name key as by their names, and keys computed again when DuckDB's hash changes", async () => {
  const { dataDir, store } = await take();
  const funnels = [
    // Pages; and a custom event twice (its users send it in several sessions).
    [
      { kind: 'page', name: 'Profile' },
      { kind: 'page', name: 'Usage' },
      { kind: 'page', name: 'Home' },
    ],
    [
      { kind: 'event', name: 'Signed up' },
      { kind: 'event', name: 'Signed up' },
    ],
  ] as const;
  const period = between(FROM, TO);
  const sql: string[] = [];
  const keyed = [];
  for (const steps of funnels) {
    const answer = await queryFunnel(
      { read: (text, values) => (sql.push(text), store.read(text, values)) },
      [...steps],
      period,
    );
    expect(sql.at(-1)).toContain('m.name_key =');
    for (const step of answer.steps) expect(step.users).toBeGreaterThan(0);
    // Were two names to share a key, the steps are found by their names: the same answer.
    const byName = await queryFunnel(
      {
        read: (text, values) => {
          sql.push(text);
          return text.includes('all_names') ? Promise.resolve([{ n: 1 }]) : store.read(text, values);
        },
      },
      [...steps],
      period,
    );
    expect(sql.at(-1)).not.toContain('name_key');
    expect(byName).toEqual(answer);
    keyed.push(answer);
  }
  await store.close();

  // A DuckDB that hashes otherwise: its canary differs, and the keys are computed again when it opens.
  await spoilKeys(dataDir, 'name_key = 1, user_key = 1, session_key = 1');
  const reopened = await reopenShared(dataDir);
  for (const [i, steps] of funnels.entries())
    expect(await queryFunnel(reopened, [...steps], period)).toEqual(keyed[i]);
  handBack(dataDir, reopened);
}, 60_000);

it('reads a funnel past its row budget over a sample of users, labelled, and over more of them when a step has too few', async () => {
  const { store } = await loaded();
  const steps = [
    { kind: 'page', name: 'Home' },
    { kind: 'page', name: 'Profile' },
  ] as const;
  const period = between(FROM, TO);
  const exact = await queryFunnel(store, [...steps], period);
  expect(exact.estimates).toEqual([]);
  const sql: string[] = [];
  const recorded = {
    read: (text: string, values?: DuckDBValue[]) => (sql.push(text), store.read(text, values)),
  };
  // 20,900 rows of the two pages over the five days: one user in 8 brings them within 5,000.
  const sampled = await queryFunnel(recorded, [...steps], period, { rowBudget: 5_000, minUsers: 10 });
  expect(sql.at(-1)).toContain('hash(m.user_key) & 7) = 0');
  expect(sampled.estimates.map((e) => [e.field, e.kind, e.errorOf, e.method])).toEqual([
    ['users', 'distinct-count', 'value', 'a sample of 1 user in 8, chosen by a hash of their id'],
    ['medianMsFromPrevious', 'percentile', 'rank', 'a sample of 1 user in 8, chosen by a hash of their id'],
  ]);
  const [users] = sampled.estimates;
  for (const [i, step] of sampled.steps.entries()) {
    expect(step.users % 8).toBe(0);
    // Within four standard errors of the exact count (the smallest step's error bounds every step's).
    expect(Math.abs(step.users - exact.steps[i]!.users)).toBeLessThanOrEqual(
      4 * users!.error * exact.steps[i]!.users,
    );
  }
  expect(users!.error).toBeCloseTo(
    Math.sqrt(7 / 8 / (Math.min(...sampled.steps.map((s) => s.users)) / 8)),
    10,
  );

  // Profile's 150 users give about 19 in a sample of 1 in 8: for 40, the funnel is counted again over
  // 1 in 2; for 1,000, over every user (exact, no estimates).
  const wider = await queryFunnel(store, [...steps], period, { rowBudget: 5_000, minUsers: 40 });
  expect(wider.estimates[0]?.method).toBe('a sample of 1 user in 2, chosen by a hash of their id');
  expect(await queryFunnel(store, [...steps], period, { rowBudget: 5_000, minUsers: 1_000 })).toEqual(exact);
}, 60_000);

it("reads a segment's page list past its row budget with its users over a sample, pages with too few in it counted exactly", async () => {
  const { store } = await loaded();
  // A segment (every view is anonymous): the items answer, not the sketches.
  const options = { ...between(FROM, TO), auth: 'anonymous' as const };
  const exact = await createUsageQueries(store).pages(options);
  expect(exact.estimates).toEqual([]);
  const sampled = await createUsageQueries(store, { rowBudget: 5_000, minUsers: 30 }).pages(options);
  // Views, averages and the 95th percentiles over every view, as before.
  expect(sampled.pages.map(({ users: _, ...rest }) => rest)).toEqual(
    exact.pages.map(({ users: _, ...rest }) => rest),
  );
  const [estimate] = sampled.estimates;
  expect(sampled.estimates).toHaveLength(1);
  expect(estimate).toMatchObject({
    field: 'users',
    kind: 'distinct-count',
    method: 'a sample of 1 user in 8, chosen by a hash of their id',
  });
  for (const [i, page] of sampled.pages.entries()) {
    const truth = exact.pages[i]!.users;
    if (page.name === 'Home') {
      // 10,000 users: about 1,250 in the sample, the page's estimate.
      expect(page.users % 8).toBe(0);
      expect(Math.abs(page.users - truth)).toBeLessThanOrEqual(4 * estimate!.error * truth);
      expect(estimate!.error).toBeCloseTo(Math.sqrt(7 / 8 / (page.users / 8)), 10);
    } else {
      // 150 users and fewer: under 30 in the sample, counted over every view.
      expect(page.users).toBe(truth);
    }
  }
  // Every page counted exactly when none has enough users in the sample.
  expect(await createUsageQueries(store, { rowBudget: 5_000, minUsers: 5_000 }).pages(options)).toEqual(
    exact,
  );
}, 60_000);

import { rmSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { validateEnvelope, type TelemetryItem } from '../protocol/envelopes.js';
import { queryRetention } from '../analytics/retention.js';
import { segmentSql, ts, type UsageOptions } from '../analytics/sql.js';
import { createUsageQueries } from '../analytics/usage.js';
import { rowLayout } from '../protocol/item-row.js';
import { openWritableStore, storeFile, type WritableStore } from './store.js';
import { browserContext, browserEnvelope, type BrowserKind } from '../test-support/browser-envelopes.js';
import { tempDataDir } from '../test-support/server.js';
import type { DuckDBValue } from '@duckdb/node-api';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const HOUR = 3_600_000;
const NOW = Math.floor(Date.now() / HOUR) * HOUR + 1_234_567; // Not on an hour: the ends come from the items.

const REFERRERS = ['https://News.Example/a?token=t', 'https://gatehouse.example/', '', undefined];

/** A deterministic mix over the last 3 days: kinds, users (some signed in), sessions, browsers, roles. */
function mix(n: number, seed: number): TelemetryItem[] {
  let s = seed;
  const rand = () => (s = (s * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
  const kinds: BrowserKind[] = ['pageview', 'dependency', 'exception', 'event', 'trace'];
  return Array.from({ length: n }, (_, i) => {
    const user = Math.floor(rand() * 12);
    const c = browserContext({
      sessionId: `s${Math.floor(rand() * 30)}`,
      userId: `u${user}`,
      ...(user % 3 === 0 ? { authUserId: `a${user}` } : {}),
      operationId: `op${i}`,
    });
    const e = browserEnvelope(kinds[i % kinds.length]!, c, i) as {
      time: string;
      tags: Record<string, string>;
      data: { baseData: Record<string, unknown> };
    };
    e.time = new Date(NOW - Math.floor(rand() * 3 * 24 * HOUR)).toISOString();
    if (rand() < 0.3) e.tags['ai.device.browser'] = 'Firefox';
    if (kinds[i % kinds.length] === 'dependency') e.data.baseData.success = rand() < 0.7;
    if (rand() < 0.2) e.data.baseData.properties = { roles: user % 2 ? 'admin' : 'admin,auditor' };
    // Referring sites: another site's, the page's own, none.
    const ref = REFERRERS[Math.floor(rand() * REFERRERS.length)];
    if (ref !== undefined)
      e.data.baseData.properties = { ...(e.data.baseData.properties as object), refUri: ref };
    const result = validateEnvelope(e, () => true);
    if (!result.ok) throw new Error(result.message);
    return { ...result.item, os: rand() < 0.4 ? 'iOS' : 'Windows' };
  });
}

/** The overview's and the chart's figures straight from the items, as before the rollup. */
async function fromItems(store: WritableStore, from: number, to: number, options: UsageOptions) {
  const [figures] = await hourlyFromItems(store, from, to - from, options);
  return figures!;
}

/**
 * The same figures for each `length` ms from `from` up to `to`, in one pass over the items (the chart's
 * buckets): a list of [users, signed-in users, sessions, page views, exceptions, failed calls].
 */
async function hourlyFromItems(
  store: WritableStore,
  from: number,
  length: number,
  options: UsageOptions,
  to = from + length,
) {
  const values: DuckDBValue[] = [ts(from), ts(to), from, length];
  const seg = segmentSql(options, values);
  const rows = await store.read(
    `SELECT ((epoch_ms(time) - $3) // $4)::DOUBLE AS bucket,
      count(DISTINCT user_id)::DOUBLE AS users, count(DISTINCT auth_user_id)::DOUBLE AS signed_in,
      count(DISTINCT session_id)::DOUBLE AS sessions, count(*) FILTER (WHERE type = 'pageview')::DOUBLE AS pv,
      count(*) FILTER (WHERE type = 'exception')::DOUBLE AS ex,
      count(*) FILTER (WHERE type = 'dependency' AND success = false)::DOUBLE AS failed
    FROM items WHERE time >= $1 AND time < $2${seg} GROUP BY bucket`,
    values,
  );
  const buckets = Math.ceil((to - from) / length);
  const figures = Array.from({ length: buckets }, () => [0, 0, 0, 0, 0, 0] as unknown[]);
  for (const row of rows)
    figures[Number(row.bucket)] = [row.users, row.signed_in, row.sessions, row.pv, row.ex, row.failed];
  return figures;
}

/** The latest sessions straight from the items, as before the rollup's first pass (usage.ts sessions). */
async function sessionsFromItems(
  store: WritableStore,
  from: number,
  to: number,
  options: UsageOptions,
  limit: number,
) {
  const values: DuckDBValue[] = [ts(from), ts(to), limit];
  const seg = segmentSql(options, values);
  const rows = await store.read(
    `SELECT session_id, coalesce(max(auth_user_id), max(user_id)) AS usr, epoch_ms(min(time))::DOUBLE AS start_ms,
      (epoch_ms(max(time)) - epoch_ms(min(time)))::DOUBLE AS length_ms,
      count(*) FILTER (WHERE type = 'pageview')::DOUBLE AS pages,
      count(*) FILTER (WHERE type = 'exception' OR (type = 'dependency' AND success = false))::DOUBLE AS errors
    FROM items WHERE session_id IS NOT NULL AND time >= $1 AND time < $2${seg}
    GROUP BY session_id ORDER BY start_ms DESC, session_id LIMIT $3::INTEGER`,
    values,
  );
  return rows.map((r) => ({
    sessionId: r.session_id,
    user: r.usr,
    start: new Date(Number(r.start_ms)).toISOString(),
    lengthMs: r.length_ms,
    pages: r.pages,
    errors: r.errors,
  }));
}

/** Retention straight from the items, as before the rollup: every item before the period's end, none from the rollup. */
async function retentionFromItems(store: WritableStore, options: UsageOptions) {
  const direct = {
    read: (sql: string, values?: DuckDBValue[]) =>
      store.read(
        sql.replace(
          /FROM usage_hourly\s+WHERE hour < \$3/,
          'FROM (SELECT time AS hour, * FROM items) WHERE hour < $2',
        ),
        values,
      ),
  };
  return Promise.all([queryRetention(direct, 'day', options), queryRetention(direct, 'week', options)]);
}

/** The overview, the 24-hour chart and retention agree with the items, for each segment. */
async function expectExact(store: WritableStore) {
  const usage = createUsageQueries(store);
  // The sessions' sources are the page views from another site, through loads, erasures and prunes.
  const [sources] = await store.read(`SELECT (SELECT count(*) FROM session_sources)::DOUBLE AS kept,
    (SELECT count(*) FROM items WHERE type = 'pageview' AND referrer <> '')::DOUBLE AS items`);
  expect(sources!.kept).toBe(sources!.items);
  expect(sources!.kept).toBeGreaterThan(0);
  for (const segment of [{}, { browser: 'Firefox' }] as UsageOptions[]) {
    const options = { ...segment, range: '7d' as const, now: NOW };
    expect(
      await Promise.all([queryRetention(store, 'day', options), queryRetention(store, 'week', options)]),
    ).toEqual(await retentionFromItems(store, options));
  }
  const segments: UsageOptions[] = [
    {},
    { auth: 'signed-in' },
    { auth: 'anonymous' },
    { browser: 'Firefox' },
    { role: 'auditor' },
    { os: 'iOS' },
    { referrer: 'news.example' },
    { referrer: '(direct)' },
  ];
  for (const segment of segments) {
    for (const range of ['1h', '24h', '7d'] as const) {
      const options = { ...segment, range, now: NOW };
      const o = await usage.overview(options);
      const length = { '1h': HOUR, '24h': 24 * HOUR, '7d': 168 * HOUR }[range];
      const t = o.tiles;
      expect([
        t.users.value,
        t.signedInUsers.value,
        t.sessions.value,
        t.pageViews.value,
        t.exceptions.value,
        t.failedCalls.value,
      ]).toEqual(await fromItems(store, NOW - length, NOW, options));
      expect(t.users.previous).toBe((await fromItems(store, NOW - 2 * length, NOW - length, options))[0]);
    }
    // The sessions list: its first pass over the rollup picks the same latest sessions, ties included.
    for (const [range, length] of [
      ['1h', HOUR],
      ['24h', 24 * HOUR],
      ['7d', 168 * HOUR],
    ] as const) {
      // The latest 50, of which the first 1 and 4 are the shorter lists (ordered, ties broken by id).
      const latest = await sessionsFromItems(store, NOW - length, NOW, segment, 50);
      for (const limit of [1, 4, 50]) {
        const listed = await usage.sessions({ ...segment, range, now: NOW, limit });
        expect(
          listed.sessions.map(({ sessionId, user, start, lengthMs, pages, errors }) => ({
            sessionId,
            user,
            start,
            lengthMs,
            pages,
            errors,
          })),
        ).toEqual(latest.slice(0, limit));
      }
    }
    const chart = await usage.timeseries({ ...segment, range: '24h', now: NOW });
    const first = Date.parse(chart.buckets[0]!.start);
    // Hour after hour, each bucket against the items of its hour.
    expect(chart.buckets.map((bucket) => Date.parse(bucket.start) - first)).toEqual(
      chart.buckets.map((_, index) => index * HOUR),
    );
    const hours = await hourlyFromItems(store, first, HOUR, segment, first + chart.buckets.length * HOUR);
    expect(
      chart.buckets.map((bucket) => [
        bucket.users,
        bucket.sessions,
        bucket.pageViews,
        bucket.exceptions,
        bucket.failedCalls,
      ]),
    ).toEqual(hours.map(([users, , sessions, pv, ex, failed]) => [users, sessions, pv, ex, failed]));
  }
}

it('answers the overview and the hourly chart from the rollup exactly as from the items, through loads, an erasure and a prune', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  // Small loads, so a session's hour has rows from several loads.
  const store = await openWritableStore(dataDir, { load: { rows: 50, idleMs: 10, maxLagMs: 50 } });
  for (let i = 0; i < 6; i++) {
    await store.append(mix(400, i + 1));
    await store.flush();
  }
  // A user first seen in the current hour, which the rollup's whole hours do not hold yet.
  const [newcomer] = mix(1, 99);
  await store.append([{ ...newcomer!, userId: 'u99', authUserId: null, time: NOW - 1000 }]);
  await expectExact(store);
  expect(await store.erase('a3')).toBeGreaterThan(0);
  expect(await store.erase('u4')).toBeGreaterThan(0);
  await expectExact(store);
  // A bound inside an hour: that hour is recomputed from what is left of it.
  expect(await store.prune(NOW - 30 * HOUR - 1_000_000)).toBeGreaterThan(0);
  await expectExact(store);
  const [sums] = await store.read(
    'SELECT (SELECT sum(items) FROM usage_hourly)::DOUBLE AS rolled, (SELECT count(*) FROM items)::DOUBLE AS items',
  );
  expect(sums!.rolled).toBe(sums!.items);
  await store.close();
}, 90_000); // Seven segments by three ranges, each against the items: ~20 s on a loaded machine.

it('opens a store made before the rollup and the zstd envelope, computing the rollup from its items', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const before = mix(300, 7);
  // The store as it was before the rollup (ADR 0071): DuckDB's default storage format, no rollup.
  const first = await openWritableStore(dataDir);
  await first.append(before);
  await first.close();
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const old = await DuckDBInstance.create(`${storeFile(dataDir)}.old`);
  const c = await old.connect();
  await c.run(`ATTACH '${storeFile(dataDir)}' AS made`);
  const columns = rowLayout.filter((col) => col.column !== 'os');
  await c.run(
    `CREATE TABLE items (${columns.map((col) => `${col.column} ${col.sql}`).join(', ')}, metric_value DOUBLE, metric_page VARCHAR)`,
  );
  await c.run(
    'INSERT INTO items SELECT * EXCLUDE (stack, os, referrer, name_key, user_key, session_key, signed_in, metric_page_key, event_outcome, event_reason, event_step, event_duration_ms, metric_reason) FROM made.items',
  );
  await c.run('CREATE TABLE journal_position AS SELECT * FROM made.journal_position');
  await c.run('DETACH made');
  c.closeSync();
  old.closeSync();
  rmSync(storeFile(dataDir));
  const { renameSync } = await import('node:fs');
  renameSync(`${storeFile(dataDir)}.old`, storeFile(dataDir));

  const store = await openWritableStore(dataDir);
  expect(await store.count()).toBe(300);
  const [envelope] = await store.read(
    "SELECT string_agg(DISTINCT compression, ',') AS c FROM pragma_storage_info('items') WHERE column_name = 'envelope'",
  );
  expect(envelope!.c).not.toContain('ZSTD'); // The old format kept as it was.
  await store.append(mix(200, 8));
  await expectExact(store);
  const exported: string[] = [];
  for await (const e of store.export()) exported.push(JSON.stringify(e));
  expect(exported).toHaveLength(500);
  await store.close();
});

it('opens a store made before the operating system, referrer and signed-in columns: the rollup gets its os and signed_in keys, old rows their referrer from the envelope', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const first = await openWritableStore(dataDir);
  await first.append(mix(300, 11));
  await first.close();
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const made = await DuckDBInstance.create(storeFile(dataDir));
  const c = await made.connect();
  // As it was before the breakdowns (ADR 0073): no os or referrer in the items, no os in the rollup.
  await c.run('ALTER TABLE items DROP COLUMN os');
  await c.run('ALTER TABLE items DROP COLUMN referrer');
  await c.run('ALTER TABLE usage_hourly DROP COLUMN os');
  // As it was before signed-in became a boolean (ADR 0077): no signed_in in the items or the rollup.
  await c.run('ALTER TABLE items DROP COLUMN signed_in');
  await c.run('ALTER TABLE usage_hourly DROP COLUMN signed_in');
  await c.run('DROP TABLE session_sources');
  c.closeSync();
  made.closeSync();

  const store = await openWritableStore(dataDir);
  const [old] = await store.read(
    "SELECT count(os)::DOUBLE AS os, count(*) FILTER (WHERE referrer = 'news.example')::DOUBLE AS news FROM items",
  );
  expect(old).toEqual({ os: 0, news: expect.any(Number) as number });
  expect(old!.news).toBeGreaterThan(0); // Derived from the envelope, as a load does.
  const [signedIn] = await store.read(`SELECT
    (SELECT count(*) FROM items WHERE signed_in IS DISTINCT FROM (auth_user_id IS NOT NULL))::DOUBLE AS items,
    (SELECT count(*) FROM usage_hourly WHERE signed_in IS DISTINCT FROM (auth_user_id IS NOT NULL))::DOUBLE AS rollup,
    (SELECT count(*) FROM items WHERE signed_in)::DOUBLE AS signed_in`);
  expect(signedIn).toEqual({ items: 0, rollup: 0, signed_in: expect.any(Number) as number });
  expect(signedIn!.signed_in).toBeGreaterThan(0);
  await store.append(mix(200, 12));
  await expectExact(store);
  const exported: string[] = [];
  for await (const e of store.export()) exported.push(JSON.stringify(e));
  expect(exported).toHaveLength(500);
  await store.close();
});

it('keeps the envelope of a new store with zstd, giving back each one as stored', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const stored = mix(3000, 9);
  const store = await openWritableStore(dataDir);
  await store.append(stored);
  await store.close();
  const reopened = await openWritableStore(dataDir);
  await reopened.read('CHECKPOINT');
  const [envelope] = await reopened.read(
    "SELECT string_agg(DISTINCT compression, ',') AS c FROM pragma_storage_info('items') WHERE column_name = 'envelope' AND segment_type = 'VARCHAR'",
  );
  expect(envelope!.c).toBe('ZSTD');
  const texts = (await reopened.read('SELECT envelope FROM items')).map((r) => r.envelope);
  expect(texts.sort()).toEqual(stored.map((i) => i.envelope).sort());
  await reopened.close();
});

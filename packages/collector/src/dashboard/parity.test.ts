import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUsageQueries } from '../analytics/usage.js';
import { createLogAnalyticsQueries, type Row } from '../log-analytics/log-analytics-queries.js';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import type { TestCollector } from '../test-support/server.js';
import { collectorWith } from '../test-support/stored-fixtures.js';
import { diagnose, resultColumns } from '../test-support/kusto.js';
import { dashboardQueries } from './dashboard-queries.js';
import { runOnLogAnalytics, runOnStore } from './dashboard-query.js';
import type { UsageReader } from '../analytics/sql.js';

/*
 * One shaper per answer: the same telemetry through the store, and through a Log Analytics stand-in that
 * answers each KQL query with the rows the store's SQL gave (as Log Analytics would name and type them),
 * gives the same API answer. What may differ is only what the back-ends are: which figures are estimates,
 * and how Kusto writes times and buckets.
 */
const alice = browserContext({ userId: 'alice', sessionId: 'a1', authUserId: 'alice@idp' });
const bob = browserContext({ userId: 'bob', sessionId: 'b1' });
const fixtures = [
  browserEnvelope('pageview', alice),
  browserEnvelope('pageview', bob),
  browserEnvelope('event', alice),
  browserEnvelope('exception', bob),
  browserEnvelope('dependency', alice),
  browserEnvelope('dependency', bob),
];

let running: TestCollector;
beforeAll(async () => {
  running = await collectorWith(fixtures);
});
afterAll(() => running.close());

/** A reader that keeps the rows of the store's last answer, as a workspace would give them back. */
function recording(reader: UsageReader) {
  let last: Row[] = [];
  const spy: UsageReader = {
    ...reader,
    read: async (sql, values) => (last = await reader.read(sql, values)),
    export: (filter) => reader.export(filter),
    erase: (user) => reader.erase(user),
  };
  return { spy, rows: () => last };
}

/** Kusto writes a time as a datetime and names a bucket by its start; its JSON reader gives strings. */
function asKusto(rows: Row[], bucket?: { from: number; bucketMs: number }): Row[] {
  return rows.map((r) => {
    const out: Row = {};
    for (const [key, value] of Object.entries(r)) {
      if (value === null) out[key] = '';
      else if (/^(first_seen|last_seen|start|end|t)$/.test(key))
        out[key] = new Date(Number(value)).toISOString();
      else if (key === 'bucket' && bucket) out[key] = new Date(bucket.from + Number(value) * bucket.bucketMs);
      else if (key === 'quantiles' && Array.isArray(value)) [out.p50_ms, out.p95_ms] = value as number[];
      else out[key] = value;
    }
    return out;
  });
}

const withoutEstimates = (answer: unknown) => ({ ...(answer as object), estimates: undefined });
const options = { range: '24h' as const };

describe('the same answer from the store and from Log Analytics, for every query both answer', () => {
  const shared = [
    'usageTimeseries',
    'usagePages',
    'usageExceptions',
    'usageDependencies',
    'usageEvents',
  ] as const;

  it.each(shared)('%s', async (name) => {
    const now = Date.now();
    const { spy, rows } = recording(running.collector.sink.store);
    const fromStore = await runOnStore(dashboardQueries, spy)(name, { ...options, now } as never);
    const answered = rows();
    expect(answered.length).toBeGreaterThan(0);
    const bucket =
      'bucketMs' in fromStore
        ? { from: Date.parse(fromStore.from), bucketMs: fromStore.bucketMs }
        : undefined;
    const kql: string[] = [];
    const fromWorkspace = await runOnLogAnalytics(dashboardQueries, (query) => {
      kql.push(query);
      return Promise.resolve(asKusto(answered, bucket));
    })(name, { ...options, now } as never);
    expect(withoutEstimates(fromWorkspace)).toEqual(withoutEstimates(fromStore));
    // And the KQL names its columns as the SQL does (the language service's view of its answer).
    expect(resultColumns(kql.at(-1) ?? '')).toEqual(
      expect.arrayContaining(Object.keys(asKusto(answered)[0] ?? {})),
    );
  });

  it.each(['overview', 'sessions'] as const)('%s (the usage queries beside the panels)', async (name) => {
    const now = Date.now();
    const { spy, rows } = recording(running.collector.sink.store);
    const fromStore = await createUsageQueries(spy)[name]({ ...options, now });
    const kql: string[] = [];
    const fromWorkspace = await createLogAnalyticsQueries((query) => {
      kql.push(query);
      return Promise.resolve(asKusto(rows()));
    }).usage[name]({ ...options, now });
    expect(fromWorkspace).toEqual(fromStore);
    expect(resultColumns(kql.at(-1) ?? '')).toEqual(expect.arrayContaining(Object.keys(rows()[0] ?? {})));
  });

  it('usageSignIn: four questions, each asked of both, one shaper; KQL the language service accepts', async () => {
    const now = Date.now();
    const reads: Row[][] = [];
    const reader = running.collector.sink.store;
    const spy: UsageReader = {
      ...reader,
      read: async (sql, values) => reads[reads.push(await reader.read(sql, values)) - 1]!,
      export: (f) => reader.export(f),
      erase: (u) => reader.erase(u),
    };
    const fromStore = await runOnStore(dashboardQueries, spy)('usageSignIn', { ...options, now });
    const bucket = { from: Date.parse(fromStore.from), bucketMs: fromStore.bucketMs };
    const kql: string[] = [];
    const fromWorkspace = await runOnLogAnalytics(dashboardQueries, (query) => {
      kql.push(query);
      return Promise.resolve(asKusto(reads[kql.length - 1] ?? [], bucket));
    })('usageSignIn', { ...options, now });
    expect(withoutEstimates(fromWorkspace)).toEqual(withoutEstimates(fromStore));
    expect(kql).toHaveLength(4);
    for (const query of kql) expect(diagnose(query)).toEqual([]);
  });

  it('the registry answers every query on the store; those without KQL say so', () => {
    const notAvailable = Object.entries(dashboardQueries)
      .filter(([, query]) => typeof query.logAnalytics !== 'function')
      .map(([name]) => name);
    expect(notAvailable.sort()).toEqual(['usageFlows', 'usageFunnel', 'usageRetention']);
  });
});

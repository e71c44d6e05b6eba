// What the shared state costs (ADR 0062): the same telemetry load through one Gatehouse process (its
// own store, buckets and replay table in memory) and through three replicas behind HAProxy (buckets in
// Redis, two replicas forwarding to the store holder), on this machine. Not scaling: two cores are two
// cores, and three replicas share them with the balancer and Redis. Also the DPoP replay check alone, in
// memory and in Redis. Knobs: BENCH_SECONDS (10 per setup; 3 is the short mode), BENCH_PORT_BASE (4300;
// this bench uses +20, +21 and the cluster's +60 to +66).
import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { randomUUID } from 'node:crypto';
import { startCluster } from '../scripts/cluster.mjs';
import { median, startGatehouse } from './first-paint-and-sign-in.mjs';
import { notAResult } from './not-a-result.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const BASE = Number(process.env.BENCH_PORT_BASE ?? 4300);
const SINGLE_PORT = BASE + 20;
/** Senders at once, each posting a batch and waiting for the answer before the next. */
const SENDERS = 16;
const BATCH = 20;
const PROOFS = 2_000;
/**
 * Every limit the load would meet, set so that it never refuses a batch: the item buckets high enough to
 * be asked for every batch but never refuse one; the per-source byte budget (60 KiB/s by default, a
 * browser's share) off, since the senders are one address standing for many browsers.
 */
const LIMITS = {
  TELEMETRY_MAX_ITEMS_PER_SECOND: '1000000',
  TELEMETRY_MAX_ITEMS_PER_SECOND_PER_SOURCE: '1000000',
  TELEMETRY_MAX_KB_PER_SECOND_PER_SOURCE: '0',
};
const IKEY = LOCAL_INSTRUMENTATION_KEY;

function batch() {
  const time = new Date().toISOString();
  return JSON.stringify(
    Array.from({ length: BATCH }, () => ({
      time,
      iKey: IKEY,
      name: 'Microsoft.ApplicationInsights.Event',
      tags: { 'ai.session.id': 'bench', 'ai.user.id': 'bench' },
      data: { baseType: 'EventData', baseData: { ver: 2, name: `bench ${randomUUID()}` } },
    })),
  );
}

/** SENDERS loops posting batches to `origin` for SECONDS: items stored a second and each post's latency. */
async function load(origin) {
  const latencies = [];
  let stored = 0;
  let failed = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: SENDERS }, async () => {
      while (performance.now() < end) {
        const started = performance.now();
        const res = await fetch(`${origin}/v2/track`, { method: 'POST', body: batch() }).catch(
          () => undefined,
        );
        const answer = res ? await res.json().catch(() => undefined) : undefined;
        latencies.push(performance.now() - started);
        if (res?.status === 200) stored += answer?.itemsAccepted ?? 0;
        else failed++;
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return {
    itemsPerSecond: Math.round(stored / SECONDS),
    p50ms: Number(median(latencies).toFixed(1)),
    p95ms: Number((latencies[Math.floor(latencies.length * 0.95)] ?? 0).toFixed(1)),
    failed,
  };
}

/** Median microseconds of one replay check (a new proof each time) in `table`. */
async function replayCheck(table) {
  const times = [];
  const now = Date.now() / 1000;
  for (let i = 0; i < PROOFS; i++) {
    const started = performance.now();
    await table.remember('bench-key', randomUUID(), now + 300, now);
    times.push(performance.now() - started);
  }
  return Math.round(median(times) * 1000);
}

export async function run() {
  const results = {};
  const single = await startGatehouse(
    { PUBLIC_ORIGIN: `http://localhost:${SINGLE_PORT}`, ...LIMITS },
    SINGLE_PORT,
    SINGLE_PORT + 1,
  );
  try {
    results.one = await load(`http://localhost:${SINGLE_PORT}`);
  } finally {
    single.kill('SIGTERM');
  }
  const cluster = await startCluster({ base: BASE, env: LIMITS });
  try {
    results.three = await load(cluster.origin);
    const { MemoryReplayTable } = await import('../apps/server/dist/auth/dpop.js');
    const { SharedState } = await import('../apps/server/dist/shared-state.js');
    const { silentLogger } = await import('../apps/server/dist/log.js');
    const shared = new SharedState({ url: `redis://127.0.0.1:${cluster.redisPort}`, logger: silentLogger });
    await shared.connect();
    results.replayCheckMicros = {
      memory: await replayCheck(new MemoryReplayTable(100_000, PROOFS + 1)),
      redis: await replayCheck(shared.replayTable(PROOFS + 1)),
    };
    await shared.close();
  } finally {
    await cluster.stop();
  }

  const { one, three, replayCheckMicros } = results;
  // A figure measured with failed requests is no result.
  for (const [setup, figures] of Object.entries({ one, three }))
    if (figures.failed > 0) notAResult(`${setup}: ${figures.failed} requests failed`);
  console.log(
    `\nThe cost of the shared state (${SECONDS} s each, ${SENDERS} senders of ${BATCH}-item batches)`,
  );
  console.table({
    'one process (memory, own store)': one,
    'three replicas + HAProxy + Redis': three,
  });
  console.log(
    `three replicas / one: ${(three.itemsPerSecond / one.itemsPerSecond).toFixed(2)}× the items a second, ` +
      `${(three.p50ms / one.p50ms).toFixed(2)}× the median latency (one balancer hop, one Redis script and, ` +
      'on two of three, one forwarding hop per batch; the same two cores for all).',
  );
  console.log(
    `DPoP replay check: ${replayCheckMicros.memory} µs in memory, ${replayCheckMicros.redis} µs in Redis ` +
      `(median of ${PROOFS}, loopback).`,
  );
  return results;
}

if (process.argv[1] && import.meta.url.endsWith(process.argv[1].replace(/^.*\/bench\//, '/bench/'))) {
  await run();
}

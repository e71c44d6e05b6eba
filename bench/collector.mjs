// Collector throughput: items per second stored durably from concurrent senders over HTTP on 127.0.0.1,
// with per-batch latency, the collector's CPU per item and its peak memory, for each payload shape an
// official SDK sends: the browser SDK's JSON arrays of mixed ~1 KB envelopes, the Node.js SDK 2.x's gzip
// NDJSON batches of 250 and the Node.js SDK 3.x's (Azure Monitor exporter) JSON arrays, both captured from
// the real SDKs (sdk-payloads.mjs), each beside the floor (the same load read, hashed and journaled and
// nothing else: test-support/floor.ts); then the raw insert rate of the store.
// Needs the built package and its test support (npm run build -w @gatehouse/collector && npm run
// build:testing -w @gatehouse/collector). Bounded in time and count; removes its temp data dirs. Knobs:
// BENCH_SECONDS (15 per shape), BENCH_SENDERS (32), BENCH_BATCH (100, browser), BENCH_MAX_ITEMS (2e6 per
// shape), BENCH_SHAPES (browser,sdk2,sdk3), BENCH_INGEST_WORKER (1; 0 validates on the event loop),
// BENCH_POOL_RATE (150,000: items/s the gzip shapes' pool of distinct bodies is sized for),
// BENCH_SEARCH_STEPS (3: paced runs where the unpaced one had failed requests), BENCH_VERBOSE (1: the
// collector's warnings too), BENCH_STORE_MEMORY_MB (the store's DuckDB memory, TELEMETRY_STORE_MEMORY_MB;
// unset: DuckDB's own).
// Short mode, to see it work: BENCH_SECONDS=2 node bench/collector.mjs.
import { fork } from 'node:child_process';
import http from 'node:http';
import { connect, prepareRequest } from './raw-http.mjs';
import { notAResult } from './not-a-result.mjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createCollector, openStore } from '@gatehouse/collector';
import {
  browserBatch,
  browserContext,
  packedBrowserBatch,
} from '@gatehouse/collector/testing/browser-envelopes';
import { openFloor } from '@gatehouse/collector/testing/floor';
import { nodeSdk2Bodies, nodeSdk3Bodies } from './sdk-payloads.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const SENDERS = Number(process.env.BENCH_SENDERS ?? 32);
/** TELEMETRY_STORE_MEMORY_MB for the store under load (DuckDB's memory_limit); unset: DuckDB's own. */
const STORE_MEMORY_MB = process.env.BENCH_STORE_MEMORY_MB
  ? Number(process.env.BENCH_STORE_MEMORY_MB)
  : undefined;
const BATCH = Number(process.env.BENCH_BATCH ?? 100);
const MAX_ITEMS = Number(process.env.BENCH_MAX_ITEMS ?? 2_000_000);
const INGEST_WORKER = process.env.BENCH_INGEST_WORKER !== '0';
const SHAPES = (process.env.BENCH_SHAPES ?? 'browser,sdk2,sdk3').split(',');
const POOL_RATE = Number(process.env.BENCH_POOL_RATE ?? 150_000);
const RAW_ITEMS = 200_000;
const RAW_GROUP = 1_000;
const SENDERS_FLAG = '--senders';
/** Paced runs that look for the highest rate taken with no failed request, where the unpaced run had some. */
const SEARCH_STEPS = Number(process.env.BENCH_SEARCH_STEPS ?? 3);
/** BENCH_VERBOSE=1: the collector's warnings too (each 503 it answered, say). */
const VERBOSE = process.env.BENCH_VERBOSE === '1';

/**
 * Distinct batch bodies (different sessions, users and pages), prepared and encoded before the clock
 * starts, as a load generator would: the senders' CPU is part of this 2-core machine's budget.
 */
function browserBodies() {
  return Array.from({ length: 32 }, (_, i) => ({
    body: Buffer.from(JSON.stringify(browserBatch(BATCH, browserContext({ page: `/page/${i % 8}` })))),
    headers: { 'Content-Type': 'application/json' },
  }));
}

const shapes = {
  browser: { title: `browser SDK: JSON arrays of ${BATCH} items (~1 KB each)`, bodies: browserBodies },
  sdk2: { title: 'Node.js SDK 2.x: gzip NDJSON, 250 items a batch', bodies: () => nodeSdk2Bodies(16) },
  sdk3: {
    title: 'Node.js SDK 3.x (exporter): JSON arrays, up to 512 items',
    bodies: () => nodeSdk3Bodies(8192),
  },
};

/** Items in one captured body: lines of NDJSON (gunzipped), else elements of the JSON array. */
function countIn(body, headers) {
  const text = headers['Content-Encoding'] === 'gzip' ? gunzipSync(body).toString() : body.toString();
  return headers['Content-Type'].includes('x-json-stream')
    ? text.split('\n').filter((l) => l.trim()).length
    : JSON.parse(text).length;
}

/**
 * The senders' load, from a child process, against `handle` served on 127.0.0.1: the senders' result, the
 * CPU this process spent meanwhile (every thread) and its peak RSS.
 */
async function drive(handle, requests, perBatch, rate = 0, meanPerBatch = perBatch) {
  const server = http.createServer(handle);
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${server.address().port}/v2/track`;
  // The collector's process is this one; the senders run in a child (SENDERS_FLAG, above).
  const child = fork(new URL(import.meta.url), [SENDERS_FLAG], { serialization: 'advanced' });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const next = () =>
    new Promise((resolve, reject) => {
      child.once('message', resolve);
      child.once('exit', (code) => reject(new Error(`the senders' process exited (${code})`)));
    });
  const ready = next();
  child.send({
    url,
    seconds: SECONDS,
    senders: SENDERS,
    maxRequests: Math.ceil(MAX_ITEMS / perBatch),
    requests,
    // Requests a second when paced (items/s offered over the mean batch); 0: as fast as they can go.
    requestsPerSecond: rate / meanPerBatch,
  });
  await ready;
  let peakRss = process.memoryUsage().rss;
  const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
  const cpuBefore = process.cpuUsage();
  const finished = next();
  child.send({ go: true });
  const result = await finished;
  await exited;
  const cpu = process.cpuUsage(cpuBefore);
  clearInterval(sampler);
  await new Promise((resolve) => server.close(resolve));
  return { result, cpu, peakRss };
}

// The senders run in a child process: their own event loop on the second core, as a browser would be,
// and apart from the collector's, so that process.cpuUsage() there counts the collector alone.
if (process.argv.includes(SENDERS_FLAG)) {
  const { url, seconds, senders, maxRequests, requests, requestsPerSecond } = await new Promise((resolve) =>
    process.once('message', resolve),
  );
  // The collector stores each item once, so every send carries new items: each envelope's `time` (a
  // fixed-width ISO string) gets the next value of a clock counting back one millisecond per item (2
  // million items span 33 minutes, well inside the collector's 48 h window). In a plain body it is written
  // in place just before the request goes out; a gzip body cannot be edited so, so a pool of distinct
  // bodies, each rewritten then gzipped, is prepared before the clock starts, for POOL_RATE items/s.
  const TIME = '"time":"';
  let clock = Date.now();
  const nextTime = () => new Date(clock--).toISOString();
  const pool = [];
  for (const { body, headers } of requests) {
    const buffer = Buffer.from(body.buffer, body.byteOffset, body.byteLength);
    if (headers['Content-Encoding'] !== 'gzip') {
      const request = prepareRequest(url, buffer, headers);
      const offsets = [];
      for (let at = request.indexOf(TIME); at >= 0; at = request.indexOf(TIME, at + 1))
        offsets.push(at + TIME.length);
      pool.push(() => {
        for (const at of offsets) request.write(nextTime(), at, 'latin1');
        return request;
      });
    } else {
      pool.push({ text: gunzipSync(buffer).toString(), headers });
    }
  }
  const templates = pool.filter((entry) => typeof entry !== 'function');
  let poolSize = Infinity;
  if (templates.length > 0) {
    const perBody = Math.max(...templates.map(({ text }) => text.split('\n').filter(Boolean).length));
    poolSize = Math.min(maxRequests, Math.ceil((POOL_RATE * seconds) / perBody));
    pool.length = 0;
    const timePattern = /"time":"[^"]{24}"/g;
    for (let i = 0; i < poolSize; i++) {
      const { text, headers } = templates[i % templates.length];
      const fresh = gzipSync(text.replace(timePattern, () => `${TIME}${nextTime()}"`));
      const request = prepareRequest(url, fresh, headers);
      pool.push(() => request);
    }
  }
  const latencies = [];
  let accepted = 0;
  let failed = 0;
  /** Failed requests by status (0: the connection closed before the answer). */
  const failures = {};
  let started = 0;
  const limit = Math.min(maxRequests, poolSize);
  process.send({ ready: true });
  await new Promise((resolve) => process.once('message', resolve));
  const cpuBefore = process.cpuUsage();
  const deadline = performance.now() + seconds * 1000;
  const sender = async (id) => {
    let connection = await connect(url);
    let n = id;
    while (performance.now() < deadline && started < limit) {
      const index = started++;
      // Paced: the k-th request of all the senders goes out no earlier than k intervals after the start.
      if (requestsPerSecond > 0) {
        const wait = t0 + (index * 1000) / requestsPerSecond - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        if (performance.now() >= deadline) break;
      }
      // The collector closes a connection it refused early (bytes in flight): a new one, as a client would.
      if (connection.closed) connection = await connect(url);
      // A pooled gzip body is sent once; plain bodies are reused with new times.
      const request = pool[templates.length > 0 ? index : n++ % pool.length]();
      const t = performance.now();
      const { status, text } = await connection.send(request);
      // Latency of the batches stored; a batch refused (503 while the store catches up) is a failure.
      if (status === 200) {
        latencies.push(performance.now() - t);
        accepted += JSON.parse(text).itemsAccepted;
      } else {
        failed++;
        failures[status] = (failures[status] ?? 0) + 1;
      }
    }
    connection.close();
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: senders }, (_, i) => sender(i)));
  const elapsed = (performance.now() - t0) / 1000;
  const cpu = process.cpuUsage(cpuBefore);
  const poolUsedUp = poolSize < maxRequests && started >= poolSize;
  process.send({
    accepted,
    failed,
    failures,
    elapsed,
    latencies,
    sendersCpu: cpu.user + cpu.system,
    poolUsedUp,
  });
  process.disconnect();
} else {
  const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const root = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-collector-'));
  const rates = {};
  try {
    const fmt = (n) => Math.round(n).toLocaleString('en-US');
    // 1. Over HTTP, through the whole collector: read, parse, validate, group commit, answer; per shape.
    for (const name of SHAPES) {
      const shape = shapes[name];
      const requests = await shape.bodies();
      const counts = requests.map(({ body, headers }) => countIn(body, headers));
      const perBatch = Math.max(...counts);
      const meanPerBatch = counts.reduce((sum, n) => sum + n, 0) / counts.length;
      /** One run against a new, empty collector: as fast as the senders go (rate 0), or paced. */
      const measure = async (rate) => {
        const dataDir = path.join(root, `http-${name}-${rate}`);
        const collector = await createCollector({
          dataDir,
          instrumentationKeys: 'any',
          allowedOrigins: [],
          ingestWorker: INGEST_WORKER,
          // The senders are one address standing for many SDKs: one source's share of the bytes in
          // flight is not what this measures (the cap on everyone's, 64 MiB, stays).
          maxBytesInFlightPerSource: 0,
          memoryLimitMb: STORE_MEMORY_MB,
          log: (level, message) => {
            if (level !== 'warn' || VERBOSE) console.info(`[collector ${level}] ${message}`);
          },
        });
        const { result, cpu, peakRss } = await drive(
          (req, res) => collector.handle(req, res),
          requests,
          perBatch,
          rate,
          meanPerBatch,
        );
        // Answers come once items are durable in the journal; count() first loads the rest into DuckDB.
        const loadStart = performance.now();
        const stored = await collector.store.count();
        const loadLag = performance.now() - loadStart;
        await collector.close();
        rmSync(dataDir, { recursive: true, force: true });
        // A figure measured with failed requests, or with items acknowledged and not stored, is no result.
        const valid = result.failed === 0 && stored === result.accepted;
        return {
          rate,
          result,
          cpu,
          peakRss,
          stored,
          loadLag,
          valid,
          httpRate: result.accepted / result.elapsed,
        };
      };
      const failures = ({ result, stored }) => {
        const statuses = Object.entries(result.failures)
          .map(([status, count]) => `${status === '0' ? 'closed' : status} ×${fmt(count)}`)
          .join(', ');
        return (
          `${fmt(result.failed)} requests failed (${statuses || 'none'}); ` +
          `${fmt(result.accepted)} items acknowledged, ${fmt(stored)} stored`
        );
      };
      console.info(
        `${shape.title}: ${SENDERS} senders, ${SECONDS} s a run, ingest worker ${INGEST_WORKER ? 'on' : 'off'}`,
      );
      // As fast as the senders go. Where the store's load falls behind the HTTP side, the collector sheds
      // load with 503 (as it must), and that run is no result: the figure is then the highest paced rate
      // it takes for the whole run with no failed request, found in SEARCH_STEPS runs.
      let run = await measure(0);
      if (!run.valid) {
        console.info(
          `  as fast as the senders go: ${fmt(run.httpRate)} items/s acknowledged, but ${failures(run)}: the store fell behind, so no result.`,
        );
        console.info(`  the highest paced rate taken for ${SECONDS} s with no failed request:`);
        let best;
        let below = 0;
        let above = run.httpRate;
        let rate = Math.round(above * 0.8);
        for (let step = 0; step < SEARCH_STEPS; step++) {
          const paced = await measure(rate);
          console.info(
            `    offered ${fmt(rate)} items/s: ${paced.valid ? `taken, ${fmt(paced.httpRate)} items/s` : failures(paced)}`,
          );
          if (paced.valid) {
            best = paced;
            below = rate;
          } else above = rate;
          rate = Math.round(best ? (below + above) / 2 : rate * 0.75);
        }
        if (!best) {
          notAResult(`every paced run had failed requests, down to ${fmt(above)} items/s offered`, '  ');
          continue;
        }
        run = best;
      }
      const { result, cpu, peakRss, stored, loadLag, httpRate } = run;
      console.info(
        `  items stored durably: ${fmt(result.accepted)} (store counts ${fmt(stored)}); failed requests: ${fmt(result.failed)}`,
      );
      console.info(
        `  all of them loaded into DuckDB ${Math.round(loadLag)} ms after the run: ${fmt(result.accepted / (result.elapsed + loadLag / 1000))} items/s loaded`,
      );
      console.info(
        `  throughput: ${fmt(httpRate)} items/s${run.rate > 0 ? ` (paced at ${fmt(run.rate)})` : ' (as fast as the senders go)'}`,
      );
      const sorted = result.latencies.sort((a, b) => a - b);
      console.info(
        `  latency per stored batch: p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms`,
      );
      // CPU per stored item: steadier than items/s on a shared machine. The collector's process (every
      // thread: event loop, ingest worker, DuckDB, fsync) apart from the senders'.
      const perItem = (us) => (us / Math.max(1, result.accepted)).toFixed(1);
      console.info(
        `  CPU per item: collector ${perItem(cpu.user + cpu.system)} µs (all its threads), senders ${perItem(result.sendersCpu)} µs`,
      );
      console.info(
        `  collector memory: peak RSS ${fmt(peakRss / 1048576)} MiB (the store's memory: ${STORE_MEMORY_MB === undefined ? "DuckDB's own limit" : `${STORE_MEMORY_MB} MiB`})`,
      );
      if (result.poolUsedUp)
        console.info(`  (the pool of distinct bodies ran out before ${SECONDS} s: raise BENCH_POOL_RATE)`);
      console.info(`  goal >= 100,000 items/s durably over HTTP: ${httpRate >= 100_000 ? 'met' : 'NOT met'}`);
      console.info(`  goal peak RSS < 256 MiB: ${peakRss < 256 * 1048576 ? 'met' : 'NOT met'}`);
      rates[name] = httpRate;

      // The floor: the same load against reading, hashing and journalling each item and nothing else.
      const floor = await openFloor(path.join(root, `floor-${name}`));
      const floorRun = await drive((req, res) => floor.handle(req, res), requests, perBatch);
      await floor.close();
      const floorRate = floorRun.result.accepted / floorRun.result.elapsed;
      if (floorRun.result.failed > 0 || floor.stored !== floorRun.result.accepted) {
        notAResult(
          `${fmt(floorRun.result.failed)} requests to the floor failed; ` +
            `${fmt(floorRun.result.accepted)} items acknowledged, ${fmt(floor.stored)} journaled`,
          '  ',
        );
      }
      const floorCpu = (floorRun.cpu.user + floorRun.cpu.system) / Math.max(1, floorRun.result.accepted);
      console.info(
        `  the floor (each item read, hashed and journaled, nothing else, on the event loop alone): ` +
          `${fmt(floorRate)} items/s, ${floorCpu.toFixed(1)} µs of CPU an item`,
      );
      console.info(
        `  the collector's rate as a share of the floor's: ${((httpRate / floorRate) * 100).toFixed(0)} %`,
      );
    }

    // 2. The store alone: items packed as the ingest packs them (validated, their envelope values read),
    // prepared before the clock starts, appended in groups (each durable in the journal), then loaded.
    const store = await openStore(path.join(root, 'raw'));
    const groups = [];
    for (let done = 0; done < RAW_ITEMS; done += RAW_GROUP) groups.push(await packedBrowserBatch(RAW_GROUP));
    const t0 = performance.now();
    for (const group of groups) await store.append(group);
    if ((await store.count()) !== RAW_ITEMS) process.exitCode = 1;
    const rawRate = RAW_ITEMS / ((performance.now() - t0) / 1000);
    await store.close();

    console.info(
      `store alone (${RAW_GROUP} items per durable append, all loaded into DuckDB): ${fmt(rawRate)} items/s`,
    );
    for (const [name, rate] of Object.entries(rates))
      console.info(`ratio HTTP / raw, ${name}: ${(rate / rawRate).toFixed(2)}`);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

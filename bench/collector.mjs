// Collector throughput: items per second stored durably from concurrent senders over HTTP on 127.0.0.1,
// with per-batch latency and the server's peak memory, for each payload shape an official SDK sends: the
// browser SDK's JSON arrays of mixed ~1 KB envelopes, the Node.js SDK 2.x's gzip NDJSON batches of 250
// and the Node.js SDK 3.x's (Azure Monitor exporter) JSON arrays, both captured from the real SDKs
// (sdk-payloads.mjs); then the raw insert rate of the store.
// Needs the built package (npm run build -w @gatehouse/collector). Bounded in time and count; removes
// its temp data dirs. Knobs: BENCH_SECONDS (15 per shape), BENCH_SENDERS (32), BENCH_BATCH (100, browser),
// BENCH_MAX_ITEMS (2e6 per shape), BENCH_SHAPES (browser,sdk2,sdk3), BENCH_INGEST_WORKER (1; 0 validates
// on the event loop). Short mode, to see it work: BENCH_SECONDS=2 node bench/collector.mjs.
import http from 'node:http';
import { connect, prepareRequest } from './raw-http.mjs';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { Worker, isMainThread, parentPort, workerData } from 'node:worker_threads';
import { gunzipSync } from 'node:zlib';
import { createCollector, openStore, validateEnvelope } from '../packages/collector/dist/index.js';
import {
  browserBatch,
  browserContext,
  SEQ_DIGITS,
} from '../packages/collector/dist/test-support/browser-envelopes.js';
import { nodeSdk2Bodies, nodeSdk3Bodies } from './sdk-payloads.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 15);
const SENDERS = Number(process.env.BENCH_SENDERS ?? 32);
const BATCH = Number(process.env.BENCH_BATCH ?? 100);
const MAX_ITEMS = Number(process.env.BENCH_MAX_ITEMS ?? 2_000_000);
const INGEST_WORKER = process.env.BENCH_INGEST_WORKER !== '0';
const SHAPES = (process.env.BENCH_SHAPES ?? 'browser,sdk2,sdk3').split(',');
const RAW_ITEMS = 200_000;
const RAW_GROUP = 1_000;

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

// The senders run in a worker thread: its own event loop on the second core, as a browser would be.
if (!isMainThread) {
  const { url, seconds, senders, maxRequests, requests } = workerData;
  const prepared = requests.map(({ body, headers }) =>
    prepareRequest(url, Buffer.from(body.buffer, body.byteOffset, body.byteLength), headers),
  );
  // The collector stores each item once, so every send carries new items: where a body has the test
  // data's fixed-width `seq` (the browser shape), a fresh number is written into it, in place, before the
  // request goes out. The SDKs' captured bodies have none (and 2.x's are gzipped): replayed, they are
  // copies, which the collector acknowledges without storing them again.
  const SEQ = Buffer.from('"seq":"');
  const seqOffsets = prepared.map((request) => {
    const offsets = [];
    for (let at = request.indexOf(SEQ); at >= 0; at = request.indexOf(SEQ, at + 1))
      offsets.push(at + SEQ.length);
    return offsets;
  });
  let seq = 1e9;
  const fresh = (i) => {
    for (const at of seqOffsets[i]) prepared[i].write(String(seq++).padStart(SEQ_DIGITS, '0'), at, 'latin1');
    return prepared[i];
  };
  const latencies = [];
  let accepted = 0;
  let failed = 0;
  let started = 0;
  const deadline = performance.now() + seconds * 1000;
  const sender = async (id) => {
    const connection = await connect(url);
    let n = id;
    while (performance.now() < deadline && started < maxRequests) {
      started++;
      const t = performance.now();
      const { status, text } = await connection.send(fresh(n++ % prepared.length));
      // Latency of the batches stored; a batch refused (503 while the store catches up) is counted apart.
      if (status === 200) {
        latencies.push(performance.now() - t);
        accepted += JSON.parse(text).itemsAccepted;
      } else failed++;
    }
    connection.close();
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: senders }, (_, i) => sender(i)));
  const elapsed = (performance.now() - t0) / 1000;
  parentPort.postMessage({ accepted, failed, elapsed, latencies });
} else {
  const quantile = (sorted, q) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  const root = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-collector-'));
  const rates = {};
  /** Items in one captured body: lines of NDJSON (gunzipped), else elements of the JSON array. */
  const countIn = (body, headers) => {
    const text = headers['Content-Encoding'] === 'gzip' ? gunzipSync(body).toString() : body.toString();
    return headers['Content-Type'].includes('x-json-stream')
      ? text.split('\n').filter((l) => l.trim()).length
      : JSON.parse(text).length;
  };
  try {
    const fmt = (n) => Math.round(n).toLocaleString('en-US');
    // 1. Over HTTP, through the whole collector: read, parse, validate, group commit, answer; per shape.
    for (const name of SHAPES) {
      const shape = shapes[name];
      const requests = await shape.bodies();
      const perBatch = Math.max(...requests.map(({ body, headers }) => countIn(body, headers)));
      const collector = await createCollector({
        dataDir: path.join(root, `http-${name}`),
        instrumentationKeys: 'any',
        allowedOrigins: [],
        ingestWorker: INGEST_WORKER,
        log: (level, message) => console.info(`[collector ${level}] ${message}`),
      });
      const server = http.createServer((req, res) => collector.handle(req, res));
      await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
      const url = `http://127.0.0.1:${server.address().port}/v2/track`;
      let peakRss = process.memoryUsage().rss;
      const sampler = setInterval(() => (peakRss = Math.max(peakRss, process.memoryUsage().rss)), 100);
      const cpuBefore = process.cpuUsage();
      const result = await new Promise((resolve, reject) => {
        const worker = new Worker(new URL(import.meta.url), {
          workerData: {
            url,
            seconds: SECONDS,
            senders: SENDERS,
            maxRequests: Math.ceil(MAX_ITEMS / perBatch),
            requests,
          },
        });
        worker.once('message', resolve);
        worker.once('error', reject);
      });
      const cpu = process.cpuUsage(cpuBefore);
      clearInterval(sampler);
      // Answers come once items are durable in the journal; count() first loads the rest into DuckDB.
      const loadStart = performance.now();
      const stored = await collector.store.count();
      const loadLag = performance.now() - loadStart;
      await collector.close();
      await new Promise((resolve) => server.close(resolve));
      const httpRate = result.accepted / result.elapsed;
      const sorted = result.latencies.sort((a, b) => a - b);
      console.info(
        `${shape.title}: ${SENDERS} senders, ${result.elapsed.toFixed(1)} s, ingest worker ${INGEST_WORKER ? 'on' : 'off'}`,
      );
      console.info(
        `  items stored durably: ${fmt(result.accepted)} (store counts ${fmt(stored)}); batches refused (503, store behind), sent again at once: ${fmt(result.failed)}`,
      );
      console.info(
        `  all of them loaded into DuckDB ${Math.round(loadLag)} ms after the run: ${fmt(result.accepted / (result.elapsed + loadLag / 1000))} items/s loaded`,
      );
      console.info(`  throughput: ${fmt(httpRate)} items/s`);
      console.info(
        `  latency per stored batch: p50 ${quantile(sorted, 0.5).toFixed(1)} ms, p99 ${quantile(sorted, 0.99).toFixed(1)} ms`,
      );
      // CPU of the whole process (senders included) per stored item: steadier than items/s on a shared machine.
      console.info(
        `  CPU per item (all threads, senders included): ${((cpu.user + cpu.system) / Math.max(1, result.accepted)).toFixed(1)} µs`,
      );
      console.info(`  server memory: peak RSS ${fmt(peakRss / 1048576)} MiB (senders' thread included)`);
      console.info(`  goal >= 50,000 items/s durably over HTTP: ${httpRate >= 50_000 ? 'met' : 'NOT met'}`);
      if (stored !== result.accepted) process.exitCode = 1;
      rates[name] = httpRate;
    }

    // 2. The store alone: validated items appended in groups (each durable in the journal), then loaded.
    const store = await openStore(path.join(root, 'raw'));
    const sample = browserBatch(700).map((e) => validateEnvelope(e, () => true));
    const items = sample.filter((v) => v.ok).map((v) => v.item);
    const t0 = performance.now();
    const seqOf = (envelope) => envelope.slice(envelope.indexOf('"seq":"'), envelope.indexOf('"seq":"') + 20);
    for (let done = 0; done < RAW_ITEMS; done += RAW_GROUP) {
      // Each item new (the store keeps each once): its seq renumbered, as the HTTP senders do.
      const group = Array.from({ length: RAW_GROUP }, (_, i) => {
        const item = items[(done + i) % items.length];
        const seq = String(done + i).padStart(SEQ_DIGITS, '0');
        return { ...item, envelope: item.envelope.replace(seqOf(item.envelope), `"seq":"${seq}"`) };
      });
      await store.append(group);
    }
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

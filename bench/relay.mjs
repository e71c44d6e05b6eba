// The relay to Azure Monitor (docs/azure.md): items per second a collector acknowledges to browser-shaped
// senders and forwards to an ingestion endpoint, and its CPU per item, as a ratio against the same
// collector storing locally (the baseline, measured in the same run). The endpoint is a counting
// stand-in in a process of its own (gunzip, count lines, 200), and the senders are another, so
// process.cpuUsage() here counts the collector and its relay alone.
// Needs the built package and its test support (npm run build -w @gatehouse/collector && npm run
// build:testing -w @gatehouse/collector). Both runs are paced at one rate the local store takes on a 2-core
// machine, so that neither is a run where the store sheds load (503: no result) and the CPU per item of
// the two compares at the same load. Knobs: BENCH_SECONDS (10 per run), BENCH_SENDERS (16), BENCH_BATCH
// (100), BENCH_RELAY_RATE (20,000 items/s offered by the senders together; 0: as fast as answered).
// Short mode: BENCH_SECONDS=2 node bench/relay.mjs.
import { fork } from 'node:child_process';
import http from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gunzipSync } from 'node:zlib';
import { createCollector, openRelaySink } from '@gatehouse/collector';
import { BROWSER_IKEY, browserBatch, browserContext } from '@gatehouse/collector/testing/browser-envelopes';
import { notAResult } from './not-a-result.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS ?? 10);
const SENDERS = Number(process.env.BENCH_SENDERS ?? 16);
const BATCH = Number(process.env.BENCH_BATCH ?? 100);
const RATE = Number(process.env.BENCH_RELAY_RATE ?? 20_000);
const ROLE = process.argv[2];

async function listen(server) {
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${server.address().port}`;
}

if (ROLE === '--endpoint') {
  // The ingestion endpoint's stand-in: takes every item, reports how many it took when asked.
  let taken = 0;
  const server = http.createServer((req, res) => {
    const chunks = [];
    req.on('data', (c) => chunks.push(c));
    req.on('end', () => {
      const lines = gunzipSync(Buffer.concat(chunks)).toString('utf8').split('\n').length;
      taken += lines;
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ itemsReceived: lines, itemsAccepted: lines, errors: [] }));
    });
  });
  process.send({ url: await listen(server) });
  process.on('message', () => process.send({ taken }));
} else if (ROLE === '--senders') {
  // Browser-shaped senders: JSON arrays of BATCH fresh envelopes (each a new item), paced or as fast as answered.
  const ready = new Promise((resolve) => process.once('message', resolve));
  process.send({ ready: true });
  const { url, seconds, senders, rate } = await ready;
  // Each sender posts a batch every `interval` ms, the senders staggered across it (rate 0: no wait).
  const interval = rate > 0 ? (senders * BATCH * 1000) / rate : 0;
  const agent = new http.Agent({ keepAlive: true, maxSockets: senders });
  const deadline = performance.now() + seconds * 1000;
  let acknowledged = 0;
  let refused = 0;
  const post = (body) =>
    new Promise((resolve, reject) => {
      const req = http.request(
        url,
        { method: 'POST', agent, headers: { 'Content-Type': 'application/json' } },
        (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode));
        },
      );
      req.on('error', reject);
      req.end(body);
    });
  const started = performance.now();
  await Promise.all(
    Array.from({ length: senders }, async (_, i) => {
      const ctx = browserContext({ page: `/page/${i % 8}` });
      let due = started + (interval * i) / senders;
      while (performance.now() < deadline) {
        const wait = due - performance.now();
        if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
        due += interval;
        const status = await post(JSON.stringify(browserBatch(BATCH, ctx)));
        if (status === 200) acknowledged += BATCH;
        else refused += BATCH;
      }
    }),
  );
  agent.destroy();
  process.send({ acknowledged, refused, elapsedMs: performance.now() - started });
} else {
  const child = (flag) => fork(new URL(import.meta.url).pathname, [flag], { stdio: 'inherit' });
  const message = (proc) => new Promise((resolve) => proc.once('message', resolve));

  /** One run: senders against a collector over `sink` (undefined: the local store); CPU and time to drain. */
  async function measure(title, makeSink, rate) {
    const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-relay-'));
    const sink = await makeSink(dataDir);
    const collector = await createCollector({
      instrumentationKeys: [BROWSER_IKEY],
      allowedOrigins: [],
      retentionDays: 0,
      log: () => undefined,
      ...(sink ? { sink } : { dataDir, maxStoreBytes: 0 }),
    });
    const server = http.createServer((req, res) => collector.handle(req, res));
    const url = `${await listen(server)}/v2/track`;
    const senders = child('--senders');
    await message(senders); // loaded and ready: its start-up is not timed
    const cpu = process.cpuUsage();
    const started = performance.now();
    senders.send({ url, seconds: SECONDS, senders: SENDERS, rate });
    const { acknowledged, refused, elapsedMs } = await message(senders);
    const sent = started + elapsedMs;
    // The relay's forwarding: until nothing is waiting (the local store: nothing to wait for).
    while (sink && sink.backlog() > 0) await new Promise((resolve) => setTimeout(resolve, 20));
    const drained = performance.now();
    const used = process.cpuUsage(cpu);
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    const stats = sink?.stats();
    await collector.close();
    rmSync(dataDir, { recursive: true, force: true });
    const result = {
      title,
      acknowledgedPerSecond: Math.round(acknowledged / ((sent - started) / 1000)),
      deliveredPerSecond: Math.round(acknowledged / ((drained - started) / 1000)),
      cpuMicrosPerItem: (used.user + used.system) / acknowledged,
      refused,
      forwarded: stats?.forwarded ?? acknowledged,
      requests: stats?.requests ?? 0,
    };
    console.log(
      `  ${title.padEnd(44)} ${String(result.acknowledgedPerSecond).padStart(7)} items/s acknowledged, ` +
        `${String(result.deliveredPerSecond).padStart(7)} items/s delivered, ${result.cpuMicrosPerItem.toFixed(1)} µs CPU/item` +
        (stats ? `, ${stats.requests} requests to the endpoint` : ''),
    );
    return result;
  }

  const pace = RATE > 0 ? `paced at ${RATE} items/s offered` : 'as fast as answered';
  console.log(
    `  ${SENDERS} senders, JSON arrays of ${BATCH} browser envelopes, ${SECONDS} s each run, ${pace}`,
  );
  // A slower machine (this one's speed varies threefold from day to day) may not take RATE: where the
  // local store refuses items, both runs are paced again at half the rate, down to an eighth of it.
  let rate = RATE;
  let baseline = await measure('local store (baseline)', () => undefined, rate);
  for (let halved = 0; baseline.refused > 0 && RATE > 0 && halved < 3; halved++) {
    rate = Math.round(rate / 2);
    console.log(`  the local store refused items: both runs paced again, at ${rate} items/s offered`);
    baseline = await measure('local store (baseline)', () => undefined, rate);
  }
  const endpoint = child('--endpoint');
  const { url: endpointUrl } = await message(endpoint);
  const relay = await measure(
    'relay to an ingestion endpoint',
    (dataDir) =>
      openRelaySink({
        connectionString: `InstrumentationKey=${BROWSER_IKEY};IngestionEndpoint=${endpointUrl}/`,
        dataDir,
        maxBytes: 8 * 1024 ** 3,
        log: () => undefined,
      }),
    rate,
  );
  // A figure measured while items were refused is no result.
  for (const { refused, title } of [baseline, relay]) {
    if (refused > 0) notAResult(`${refused} items refused (${title})`, '  ');
  }
  endpoint.send('count');
  const { taken } = await message(endpoint);
  endpoint.kill();
  console.log(
    `  relay / local: ${(relay.acknowledgedPerSecond / baseline.acknowledgedPerSecond).toFixed(2)}× the items/s acknowledged, ` +
      `${(relay.cpuMicrosPerItem / baseline.cpuMicrosPerItem).toFixed(2)}× the CPU per item; the endpoint took ${taken} of ${relay.forwarded} forwarded`,
  );
  if (taken !== relay.forwarded) process.exitCode = 1;
}

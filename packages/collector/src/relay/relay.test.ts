import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { spawnSync } from 'node:child_process';
import { appendFileSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { crc32, gunzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { LogLevel } from '../logger.js';
import { createIngest } from '../protocol/ingest.js';
import type { PackedItems } from '../protocol/packed.js';
import { SinkUnavailable } from '../store/sink.js';
import { BROWSER_IKEY, browserBatch, browserContext } from '../test-support/browser-envelopes.js';
import { tempDataDir } from '../test-support/server.js';
import { ingestionTarget } from '@gatehouse/config';
import { relayItems, type RelayItem } from './envelopes.js';
import { redirectTarget, retryAfterMs } from './forwarder.js';
import { Outbox, OutboxFull } from './outbox.js';
import { openRelaySink, type RelaySink } from './relay-sink.js';

const AZURE_IKEY = '0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9';
const cleanup: (() => Promise<void> | void)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function dataDir(): string {
  const dir = tempDataDir();
  cleanup.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Browser envelopes as the collector accepts them (any key), packed as the front hands them to a sink. */
async function accepted(count: number, iKey = BROWSER_IKEY): Promise<PackedItems> {
  return acceptedText(JSON.stringify(browserBatch(count, browserContext({ iKey }))));
}

/** A JSON request body as the collector accepts it (any key). */
async function acceptedText(body: string): Promise<PackedItems> {
  const ingest = createIngest({
    instrumentationKeys: 'any',
    maxItemsPerRequest: 1000,
    maxRefusedItems: 100,
  });
  const result = await ingest(Buffer.from(body), 'application/json');
  if (!result.ok) throw new Error(result.message);
  return result.accepted;
}

const items = (n: number, from = 0): RelayItem[] =>
  Array.from({ length: n }, (_, i) => ({ key: 1000 + from + i, text: `{"n":${from + i}}` }));

interface Received {
  path: string | undefined;
  headers: http.IncomingHttpHeaders;
  envelopes: Record<string, unknown>[];
}

type Answer = (received: Received, res: http.ServerResponse) => void;

/** A loopback ingestion endpoint answering each request with the next of `answers` (the last one repeats). */
async function endpoint(answers: Answer[]) {
  const received: Received[] = [];
  let waiters: (() => void)[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
      const r = {
        path: req.url,
        headers: req.headers,
        envelopes: text.split('\n').map((l) => JSON.parse(l) as Record<string, unknown>),
      };
      received.push(r);
      const answer = answers[Math.min(received.length - 1, answers.length - 1)] as Answer;
      answer(r, res);
      for (const w of waiters.splice(0)) w();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    received,
    /** Resolves once `n` requests have arrived. */
    async requests(n: number) {
      while (received.length < n) await new Promise<void>((resolve) => waiters.push(resolve));
      waiters = waiters.filter(Boolean);
    },
  };
}

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Answer =>
  (_r, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };
const ok: Answer = (r, res) =>
  json(200, { itemsReceived: r.envelopes.length, itemsAccepted: r.envelopes.length, errors: [] })(r, res);

async function relay(url: string, extra: Partial<Parameters<typeof openRelaySink>[0]> = {}) {
  const logs: [LogLevel, string][] = [];
  const dir = extra.dataDir ?? dataDir();
  const sink = await openRelaySink({
    connectionString: `InstrumentationKey=${AZURE_IKEY};IngestionEndpoint=${url}/`,
    dataDir: dir,
    maxBytes: 64 * 1024 * 1024,
    minRetryMs: 20,
    maxRetryMs: 200,
    log: (level, message) => logs.push([level, message]),
    ...extra,
  });
  let closed = false;
  const close = async () => {
    if (!closed) await sink.close();
    closed = true;
  };
  cleanup.push(close);
  return { sink, logs, dir, close };
}

/** Waits (on the relay's own progress, polled) until `done` holds. */
async function until(sink: RelaySink, done: (s: ReturnType<RelaySink['stats']>) => boolean) {
  while (!done(sink.stats())) await new Promise((resolve) => setImmediate(resolve));
}

describe('connection string', () => {
  it('gives the track URL and key; the endpoint defaults to the SDKs', () => {
    expect(
      ingestionTarget('instrumentationkey=k;IngestionEndpoint=https://x.in.applicationinsights.azure.com/'),
    ).toEqual({
      iKey: 'k',
      trackUrl: 'https://x.in.applicationinsights.azure.com/v2.1/track',
    });
    expect(ingestionTarget('InstrumentationKey=k').trackUrl).toBe(
      'https://dc.services.visualstudio.com/v2.1/track',
    );
    expect(() => ingestionTarget('IngestionEndpoint=https://x/')).toThrow(/InstrumentationKey/);
  });

  it('reads Retry-After as seconds or a date, capped', () => {
    expect(retryAfterMs('3')).toBe(3000);
    expect(retryAfterMs(new Date(Date.now() + 10_000).toUTCString())).toBeGreaterThan(8000);
    expect(retryAfterMs('99999999')).toBe(24 * 3_600_000);
    expect(retryAfterMs('soon')).toBeUndefined();
    expect(retryAfterMs(null)).toBeUndefined();
  });
});

describe('relayItems', () => {
  it('gives back each envelope as received, one line each, with the destination key', async () => {
    const packed = await accepted(7);
    const out = relayItems(packed, AZURE_IKEY);
    expect(out).toHaveLength(7);
    expect(out.map((i) => i.key)).toEqual(packed.keys);
    for (const item of out) {
      expect(item.text).not.toMatch(/[\r\n]/);
      expect((JSON.parse(item.text) as { iKey: string }).iKey).toBe(AZURE_IKEY);
    }
    // Already the destination's key: the text is the sender's, byte for byte.
    const same = relayItems(await accepted(2, AZURE_IKEY), AZURE_IKEY);
    expect(same[0]?.text).toMatch(/^\{"time":/);
  });

  it('forwards the key it checked when the text names another as a second member', async () => {
    const victim = '11111111-2222-4333-8444-555555555555';
    const [first, second, third] = browserBatch(3, browserContext({ iKey: AZURE_IKEY })).map((e) =>
      JSON.stringify(e),
    ) as [string, string, string];
    // JSON.parse keeps the last of two members; a reader that keeps the first, or reads member names
    // without regard to case, would see the other resource's key.
    const texts = [
      first.replace('{', `{"iKey":"${victim}",`),
      second.replace('{', `{"IKEY":"${victim}",`),
      third.replace('{', `{"i\\u004bey":"${victim}",`),
    ];
    const out = relayItems(await acceptedText(`[${texts.join(',')}]`), AZURE_IKEY);
    expect(out).toHaveLength(3);
    for (const item of out) {
      expect(item.text).not.toContain(victim);
      expect(item.text.toLowerCase().split('"ikey"')).toHaveLength(2);
      expect((JSON.parse(item.text) as { iKey: string }).iKey).toBe(AZURE_IKEY);
    }
  });

  it('undoes the packing of escaped rows (control characters in the text)', async () => {
    const [envelope] = browserBatch(1, browserContext({ iKey: AZURE_IKEY }));
    const odd = {
      ...envelope,
      data: { baseType: 'EventData', baseData: { ver: 2, name: 'a\u001fb\u001ec\u001bd\u0000e' } },
    };
    const [item] = relayItems(await acceptedText(`[\n${JSON.stringify(odd, null, 2)}\n]`), AZURE_IKEY);
    expect(item?.text).not.toMatch(/\n/);
    expect((JSON.parse(item?.text ?? '') as typeof odd).data.baseData.name).toBe(
      'a\u001fb\u001ec\u001bd\u0000e',
    );
  });
});

describe('Outbox', () => {
  it('hands out each item once, keeps what is not settled across a restart, and forgets what is', async () => {
    const dir = dataDir();
    let outbox = await Outbox.open(dir, { maxBytes: 1 << 20 });
    await outbox.append(items(10));
    const first = await outbox.next(4, 1 << 20);
    expect(first.map((i) => i.text)).toEqual(items(4).map((i) => i.text));
    await outbox.settle(first.slice(0, 3), first.slice(3)); // the 4th refused with a retryable status
    const second = await outbox.next(100, 1 << 20);
    expect(second.map((i) => i.seq)).toEqual([3, 4, 5, 6, 7, 8, 9]);
    await outbox.settle(second.filter((i) => i.seq % 2 === 0));
    expect(outbox.pending).toBe(4);
    await outbox.close();

    outbox = await Outbox.open(dir, { maxBytes: 1 << 20 });
    const after = await outbox.next(100, 1 << 20);
    expect(after.map((i) => i.seq)).toEqual([3, 5, 7, 9]);
    // The de-duplication window survives too: a browser resending item 0 adds nothing.
    await outbox.append(items(1));
    expect(outbox.pending).toBe(4);
    await outbox.close();
  });

  it('cuts off an append a crash left half written, and resends what acked.log does not wholly hold', async () => {
    const dir = dataDir();
    const outbox = await Outbox.open(dir, { maxBytes: 1 << 20 });
    await outbox.append(items(3));
    await outbox.settle(await outbox.next(1, 1 << 20));
    await outbox.close();
    const segment = readdirSync(dir).find((n) => n.startsWith('outbox-')) as string;
    appendFileSync(path.join(dir, segment), 'zz {"half":'); // an append cut short (never answered)
    appendFileSync(path.join(dir, 'acked.log'), '1-'); // an acknowledgement cut short
    const warnings: string[] = [];
    const reopened = await Outbox.open(dir, { maxBytes: 1 << 20, warn: (m) => warnings.push(m) });
    expect(warnings.join()).toMatch(/incomplete append/);
    expect((await reopened.next(10, 1 << 20)).map((i) => i.text)).toEqual(['{"n":1}', '{"n":2}']);
    expect(readFileSync(path.join(dir, segment), 'utf8')).not.toContain('half');
    await reopened.close();
  });

  it('admits an append only when it fits, counting the appends still being written', async () => {
    const outbox = await Outbox.open(dataDir(), { maxBytes: 1000 });
    await outbox.append(items(20)); // about 300 bytes
    expect(outbox.hasRoom(1)).toBe(true);
    // hasRoom is asked before the items are known: it reckons with the items' size so far.
    expect(outbox.hasRoom(200)).toBe(false);
    // Two appends at once that fit one at a time, not together: the second waits for the first's bytes.
    const results = await Promise.allSettled([outbox.append(items(40, 100)), outbox.append(items(40, 200))]);
    expect(results.map((r) => r.status)).toEqual(['fulfilled', 'rejected']);
    expect(outbox.bytes).toBeLessThanOrEqual(1000);
    // Refused items were not kept: sent again, they are taken once there is room.
    await outbox.settle(await outbox.next(1000, 1 << 20));
    expect(outbox.has(1200)).toBe(false);
    await outbox.close();
  });

  it('opens in memory bounded by what it holds, however much acked.log has settled before', () => {
    // A long run's acked.log: fifty million items settled, the segments that held them long gone.
    const dir = dataDir();
    const block = Buffer.from('a {"n":0}\nb {"n":1}\n');
    const trailer = `#${block.length}:${crc32(block).toString(16)}\n`;
    writeFileSync(path.join(dir, 'outbox-000000050000000.log'), Buffer.concat([block, Buffer.from(trailer)]));
    writeFileSync(path.join(dir, 'acked.log'), '0-49999999\n50000000\n');
    const script = `
      import { Outbox } from ${JSON.stringify(new URL('./outbox.ts', import.meta.url).href)};
      const outbox = await Outbox.open(${JSON.stringify(dir)}, { maxBytes: 1 << 20 });
      const items = await outbox.next(10, 1 << 20);
      console.log(JSON.stringify({ pending: outbox.pending, seqs: items.map((i) => i.seq) }));
      await outbox.close();`;
    // A heap far smaller than fifty million numbers: opening must not count them one by one.
    const child = spawnSync(
      process.execPath,
      ['--max-old-space-size=48', '--import', 'tsx', '--input-type=module', '-e', script],
      { cwd: import.meta.dirname, encoding: 'utf8', timeout: 60_000 },
    );
    expect(child.status, child.stderr.slice(0, 300)).toBe(0);
    expect(JSON.parse(child.stdout)).toEqual({ pending: 1, seqs: [50000001] });
  });

  it('deletes segments once all their items are settled, and says when it is full', async () => {
    const dir = dataDir();
    const outbox = await Outbox.open(dir, { maxBytes: 4000, segmentBytes: 200 });
    for (let i = 0; i < 10; i++) await outbox.append(items(5, i * 5));
    expect(readdirSync(dir).filter((n) => n.startsWith('outbox-')).length).toBeGreaterThan(2);
    expect(outbox.hasRoom()).toBe(true);
    let refused: unknown;
    for (let i = 10; !refused; i++) await outbox.append(items(5, i * 5)).catch((e: unknown) => (refused = e));
    expect(refused).toBeInstanceOf(OutboxFull);
    expect(outbox.bytes).toBeLessThanOrEqual(4000);
    expect(outbox.hasRoom(5)).toBe(false);
    for (let batch = await outbox.next(7, 1 << 20); batch.length > 0; batch = await outbox.next(7, 1 << 20)) {
      await outbox.settle(batch);
    }
    expect(outbox.pending).toBe(0);
    expect(readdirSync(dir).filter((n) => n.startsWith('outbox-'))).toHaveLength(1);
    expect(outbox.hasRoom()).toBe(true);
    await outbox.close();
  });
});

describe('the relay sink', () => {
  it('forwards gzip-compressed batches of envelopes with the connection string key', async () => {
    const azure = await endpoint([ok]);
    const { sink } = await relay(azure.url);
    const packed = await accepted(12);
    await sink.append(packed);
    await until(sink, (s) => s.pending === 0);
    const [request] = azure.received;
    expect(request?.headers['content-encoding']).toBe('gzip');
    expect(request?.headers['content-type']).toBe('application/x-json-stream');
    expect(request?.envelopes.map((e) => e.iKey)).toEqual(Array(12).fill(AZURE_IKEY));
    expect(sink.stats()).toMatchObject({ pending: 0, dropped: 0, failures: 0 });
    // The same items again (a browser that lost the answer): nothing more is sent.
    await sink.append(packed);
    expect(sink.backlog()).toBe(0);
  });

  it('on 206 sends again only the items refused with a retryable status, and drops the others with a log line', async () => {
    const statuses = [429, 400, 500, 503, 408, 439, 402];
    const azure = await endpoint([
      json(206, {
        itemsReceived: 10,
        itemsAccepted: 3,
        errors: statuses.map((statusCode, index) => ({ index, statusCode, message: `no ${statusCode}` })),
      }),
      ok,
    ]);
    const { sink, logs } = await relay(azure.url);
    await sink.append(await accepted(10));
    await until(sink, (s) => s.pending === 0);
    await azure.requests(2);
    const seqOf = (e: Record<string, unknown>) => e.seq;
    const firstSeqs = azure.received[0]?.envelopes.map(seqOf) ?? [];
    expect(azure.received[1]?.envelopes.map(seqOf)).toEqual([0, 2, 3, 4, 5].map((i) => firstSeqs[i]));
    expect(sink.stats()).toMatchObject({ forwarded: 3 + 5, dropped: 2, resent: 5 });
    expect(logs.some(([level, m]) => level === 'warn' && /refused 2 of 10 items for good/.test(m))).toBe(
      true,
    );
  });

  it('retries 429 after the Retry-After, and 500/503, keeping every item', async () => {
    const azure = await endpoint([json(429, {}, { 'Retry-After': '1' }), json(503, {}), json(500, {}), ok]);
    const { sink, logs } = await relay(azure.url);
    const started = Date.now();
    await sink.append(await accepted(5));
    await until(sink, (s) => s.pending === 0 && s.failures === 0);
    expect(azure.received).toHaveLength(4);
    expect(Date.now() - started).toBeGreaterThanOrEqual(1000);
    expect(logs.some(([, m]) => /answered 429; 5 items waiting/.test(m))).toBe(true);
    expect(logs.some(([, m]) => /delivering again after 3 failed attempts/.test(m))).toBe(true);
  });

  it('keeps the items through a time-out and a connection refused', async () => {
    let stall = true;
    const azure = await endpoint([
      (_r, res) => {
        if (!stall) ok(_r, res);
        stall = false; // never answered: the relay gives up after requestTimeoutMs
      },
      ok,
    ]);
    const { sink } = await relay(azure.url, { requestTimeoutMs: 200 });
    await sink.append(await accepted(3));
    await until(sink, (s) => s.forwarded === 3);
    expect(sink.stats().resent).toBe(3);

    const nowhere = await relay('http://127.0.0.1:9', { requestTimeoutMs: 200 }); // discard port: refused
    await nowhere.sink.append(await accepted(2));
    await until(nowhere.sink, (s) => s.failures >= 2);
    expect(nowhere.sink.stats()).toMatchObject({ forwarded: 0, pending: 2 });
    expect(nowhere.sink.stats().lastError).toMatch(/could not be reached/);
  });

  it('drops an item the service calls bad (400) and keeps a batch it refuses for the key (401/403)', async () => {
    const azure = await endpoint([
      json(400, { error: 'bad' }),
      json(401, { error: 'local authentication is disabled' }),
      json(403, {}),
      ok,
    ]);
    const { sink, logs } = await relay(azure.url);
    await sink.append(await accepted(1));
    await until(sink, (s) => s.dropped === 1);
    await sink.append(await accepted(2));
    await until(sink, (s) => s.forwarded === 2);
    expect(azure.received.map((r) => r.envelopes.length)).toEqual([1, 2, 2, 2]);
    expect(logs.some(([l, m]) => l === 'error' && /refused 1 of 1 items with 400/.test(m))).toBe(true);
    expect(logs.some(([, m]) => /answered 401 .*local authentication/.test(m))).toBe(true);
  });

  it('splits a batch refused whole (400 without items named, 413) until the bad items are alone, and drops only them', async () => {
    const bad = new Set<unknown>();
    const azure = await endpoint([
      (r, res) => {
        if (bad.size === 0) for (const i of [3, 11]) bad.add(r.envelopes[i]?.seq);
        if (r.envelopes.length > 8) json(413, { error: 'too large' })(r, res);
        else if (r.envelopes.some((e) => bad.has(e.seq))) json(400, { error: 'invalid item' })(r, res);
        else ok(r, res);
      },
    ]);
    const { sink, logs } = await relay(azure.url);
    await sink.append(await accepted(16));
    await until(sink, (s) => s.pending === 0);
    expect(sink.stats()).toMatchObject({ forwarded: 14, dropped: 2 });
    const delivered = azure.received
      .filter((r) => r.envelopes.every((e) => !bad.has(e.seq)))
      .flatMap((r) => r.envelopes.map((e) => e.seq));
    expect(new Set(delivered).size).toBe(14);
    expect(delivered).toHaveLength(14);
    expect(logs.filter(([l, m]) => l === 'error' && /refused 2 of 16 items with 400/.test(m))).toHaveLength(
      1,
    );
  });

  it('takes a 400 naming items as a partial answer only when its counts add up', async () => {
    const azure = await endpoint([
      // Names one item but says none were taken: which of the others went through is unknown.
      json(400, { itemsReceived: 4, itemsAccepted: 0, errors: [{ index: 0, statusCode: 400 }] }),
      json(400, { itemsReceived: 2, itemsAccepted: 1, errors: [{ index: 0, statusCode: 400 }] }),
      ok,
    ]);
    const { sink } = await relay(azure.url);
    await sink.append(await accepted(4));
    await until(sink, (s) => s.pending === 0);
    expect(azure.received.map((r) => r.envelopes.length)).toEqual([4, 2, 2]);
    expect(sink.stats()).toMatchObject({ forwarded: 3, dropped: 1 });
  });

  it('sends a batch again when a partial answer cannot be read, and keeps forwarding', async () => {
    const azure = await endpoint([
      json(206, { itemsReceived: 2, itemsAccepted: 1, errors: { index: 0 } }),
      json(206, { itemsReceived: 2, itemsAccepted: 1, errors: [null] }),
      json(400, { errors: [null] }),
      ok,
    ]);
    const { sink } = await relay(azure.url);
    await sink.append(await accepted(2));
    await until(sink, (s) => s.pending === 0);
    expect(sink.stats()).toMatchObject({ forwarded: 2, dropped: 0 });
    expect(azure.received.map((r) => r.envelopes.length)).toEqual([2, 2, 2, 1, 1]);
  });

  it('follows a 307/308 on the configured host, and goes back to the configured URL after a failure', async () => {
    const azure = await endpoint([
      (_r, res) => {
        res.writeHead(308, { Location: '/moved/v2.1/track' });
        res.end();
      },
      ok,
      json(503, {}),
      ok,
    ]);
    const { sink } = await relay(azure.url);
    await sink.append(await accepted(3));
    await until(sink, (s) => s.forwarded === 3);
    await sink.append(await accepted(2));
    await until(sink, (s) => s.forwarded === 5);
    expect(azure.received.map((r) => r.path)).toEqual([
      '/v2.1/track',
      '/moved/v2.1/track',
      '/moved/v2.1/track',
      '/v2.1/track',
    ]);
  });

  it('does not follow a redirect to another host, and keeps the items', async () => {
    const elsewhere = await endpoint([ok]);
    const port = new URL(elsewhere.url).port;
    const redirect =
      (location: string): Answer =>
      (_r, res) => {
        res.writeHead(307, { Location: location });
        res.end();
      };
    const azure = await endpoint([
      redirect(`${elsewhere.url}/v2.1/track`),
      redirect(`http://localhost:${port}/v2.1/track`),
      ok,
    ]);
    const { sink, logs } = await relay(azure.url);
    await sink.append(await accepted(3));
    await until(sink, (s) => s.forwarded === 3);
    expect(elsewhere.received).toHaveLength(0);
    expect(azure.received).toHaveLength(3);
    expect(
      logs.some(([, m]) => /redirected to http:\/\/127\.0\.0\.1:\d+, which is not followed/.test(m)),
    ).toBe(true);
  });

  it('follows a redirect only to https on the configured host or within Azure Monitor ingestion', () => {
    const regional = 'https://westeurope-5.in.applicationinsights.azure.com/v2.1/track';
    const allowed = (from: string, location: string) => redirectTarget(from, location)?.href;
    expect(allowed('https://dc.services.visualstudio.com/v2.1/track', regional)).toBe(regional);
    expect(allowed('https://x.in.applicationinsights.azure.com/v2.1/track', '/v2.1/track?moved')).toBe(
      'https://x.in.applicationinsights.azure.com/v2.1/track?moved',
    );
    for (const location of [
      'http://x.in.applicationinsights.azure.com/v2.1/track', // no longer https
      'https://collector.example/v2.1/track', // another party's host
      'https://x.in.applicationinsights.azure.com.example/v2.1/track',
      'https://x.in.applicationinsights.azure.us/v2.1/track', // another cloud
      'https://x.in.applicationinsights.azure.com:8443/v2.1/track',
      'https://user:pw@x.in.applicationinsights.azure.com/v2.1/track',
      'ftp://x.in.applicationinsights.azure.com/',
    ]) {
      expect(allowed('https://x.in.applicationinsights.azure.com/v2.1/track', location)).toBeUndefined();
    }
    // A proxy of the operator's own: its host only.
    expect(allowed('https://relay.example/v2.1/track', regional)).toBeUndefined();
    expect(allowed('https://relay.example/v2.1/track', 'https://relay.example/eu/v2.1/track')).toBe(
      'https://relay.example/eu/v2.1/track',
    );
  });

  it('forwards after a restart what it had not forwarded before', async () => {
    const azure = await endpoint([json(503, {}), ok]);
    const first = await relay(azure.url, { minRetryMs: 60_000, maxRetryMs: 60_000 });
    await first.sink.append(await accepted(6));
    await azure.requests(1);
    await first.close();
    const second = await relay(azure.url, { dataDir: first.dir });
    await until(second.sink, (s) => s.forwarded === 6);
    expect(second.logs.some(([, m]) => /6 items from before the start/.test(m))).toBe(true);
  });

  it('refuses to take more once the outbox is at its bound, and logs why', async () => {
    const azure = await endpoint([json(503, {})]);
    const { sink, logs } = await relay(azure.url, { maxBytes: 8000, minRetryMs: 60_000, maxRetryMs: 60_000 });
    // Asked before the items are read: reckoned at about a kilobyte an item until some are seen.
    expect(sink.hasRoom(1)).toBe(true);
    expect(sink.hasRoom(1000)).toBe(false);
    while (sink.hasRoom(3)) await sink.append(await accepted(3));
    expect(logs.some(([l, m]) => l === 'error' && /outbox is full/.test(m))).toBe(true);
    // An append the estimate let through is held to the bound by its real size: 503, items kept by the sender.
    await expect(sink.append(await accepted(20))).rejects.toBeInstanceOf(SinkUnavailable);
    expect(sink.stats().outboxBytes).toBeLessThanOrEqual(8000);
  });
});

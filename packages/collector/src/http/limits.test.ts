/**
 * The collector's limits against hostile senders, over real HTTP: item caps, bounded checking and
 * answers, gzip bombs, fairness between requests, rate limits per source and overall, timeouts,
 * connection floods and the disk quota.
 */
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { readFileSync } from 'node:fs';
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { gzipSync } from 'node:zlib';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { BreezeResponse, CollectorOptions } from './collector.js';
import type { RateLimiter } from './rate-limit.js';
import type { HttpLimits } from './http-limits.js';
import { directoryBytes } from '../store/quota.js';
import { browserBatch, browserEnvelope } from '../test-support/browser-envelopes.js';
import { compilePackage, type CompiledPackage } from '../test-support/compile.js';
import { startTestCollector, tempDataDir, type TestCollector } from '../test-support/server.js';

let running: TestCollector[] = [];
afterEach(async () => {
  await Promise.all(running.map((t) => t.close()));
  running = [];
});

async function start(
  options: Partial<CollectorOptions> = {},
  http: Partial<HttpLimits> = {},
): Promise<TestCollector> {
  const t = await startTestCollector(options, http);
  running.push(t);
  return t;
}

interface Answer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Bytes of the answer's body. */
  size: number;
  /** The answer's body; `{}` when it has none (a request refused before its body was read). */
  body: BreezeResponse;
}

/**
 * POSTs to /v2/track from `localAddress` (any 127.x.y.z reaches the server on 127.0.0.1, so tests can
 * be several senders).
 */
function post(
  t: TestCollector,
  body: string | Buffer,
  headers: Record<string, string> = {},
  localAddress = '127.0.0.1',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${t.origin}/v2/track`,
      {
        method: 'POST',
        localAddress,
        agent: false,
        headers: { 'Content-Type': 'application/json', ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            size: Buffer.byteLength(text),
            body: (text ? JSON.parse(text) : {}) as BreezeResponse,
          });
        });
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const json = (items: unknown[]) => JSON.stringify(items);

/** The answer refusing a whole body: one error, at index 0. */
const refusedWhole = (status: number, message: string) => ({
  status,
  body: { itemsReceived: 0, itemsAccepted: 0, errors: [{ index: 0, statusCode: status, message }] },
});

describe('bodies that cost more than they are worth', () => {
  it('refuses a body of more items than maxItemsPerRequest whole (413), whatever its form, with a small answer', async () => {
    const t = await start();
    // 664 KB of 340,000 items: once a 23.6 MiB answer after 2.2 s.
    const array = `[${'{},'.repeat(340_000 - 1)}{}]`;
    const lines = '{}\n'.repeat(340_000);
    // 8 KB of gzip that inflates to millions of items, within the inflate limit.
    const bomb = gzipSync('1\n'.repeat(2_000_000));
    expect(bomb.length).toBeLessThan(16 * 1024);
    const answers = [
      await post(t, array),
      await post(t, lines, { 'Content-Type': 'application/x-json-stream' }),
      await post(t, bomb, { 'Content-Type': 'application/x-json-stream', 'Content-Encoding': 'gzip' }),
      // An array not written the SDKs' way: its elements are found by the exact scan, not guessed.
      await post(t, `[${'1 ,'.repeat(2000)}1]`),
    ];
    for (const answer of answers) {
      expect(answer).toMatchObject(refusedWhole(413, 'Body holds more than 1000 items.'));
    }
    // An SDK batch at the cap is taken whole.
    expect((await post(t, json(browserBatch(1000)))).body.itemsAccepted).toBe(1000);
    expect(await t.collector.store.count()).toBe(1000);
  });

  it('inflates gzip only to 4 MiB by default, half the store load run', async () => {
    const t = await start();
    const bomb = gzipSync(`[${' '.repeat(4 * 1024 * 1024)}${json(browserBatch(1)).slice(1)}`);
    expect(bomb.length).toBeLessThan(8 * 1024);
    const answer = await post(t, bomb, { 'Content-Encoding': 'gzip' });
    expect(answer.status).toBe(413);
    expect(answer.body.errors[0]?.message).toBe('Decompressed body is larger than 4194304 bytes.');
    expect(await t.collector.store.count()).toBe(0);
  });

  it('stops checking after 100 refused items and answers the first ones and a count, storing what passed', async () => {
    const t = await start();
    const bad = { ...browserEnvelope('event'), iKey: 'not-ours' };
    const batch = [...browserBatch(10), ...Array.from({ length: 890 }, () => bad)];
    const answer = await post(t, json(batch));
    expect(answer.status).toBe(206);
    expect(answer.body.itemsReceived).toBe(900);
    expect(answer.body.itemsAccepted).toBe(10);
    expect(answer.body.errors).toHaveLength(101);
    expect(answer.body.errors.slice(0, 100).map((e) => e.index)).toEqual(
      Array.from({ length: 100 }, (_, i) => 10 + i),
    );
    expect(answer.body.errors[100]).toEqual({
      index: 110,
      statusCode: 400,
      message: 'Checking stopped after 100 refused items; this item and the 789 after it were not checked.',
    });
    expect(answer.size).toBeLessThan(16 * 1024);
    expect(await t.collector.store.count()).toBe(10);
  });

  it('answers a valid batch and the rest of the app among hostile bodies before the hostile ones are all answered', async () => {
    // All from one address, whose share of the bytes in flight would refuse most hostile bodies (503)
    // before they are inflated: what is checked here is that inflating them does not hold up the rest.
    const t = await start({ maxBytesInFlightPerSource: 0 });
    // 3.9 MB of 1.3 million items: within the inflate limit, so only the item cap stops it early.
    const hostile = gzipSync(`[${'{},'.repeat(1_300_000)}{}]`);
    const order: string[] = [];
    const answers: Promise<Answer>[] = [];
    const send = (name: string, ...args: Parameters<typeof post>) =>
      answers.push(
        post(...args).then((a) => {
          order.push(name);
          return a;
        }),
      );
    let app: Promise<string> | undefined;
    for (let i = 0; i < 12; i++) {
      send('hostile', t, hostile, { 'Content-Encoding': 'gzip' });
      if (i === 0) send('valid', t, json(browserBatch(5)));
      // Any other path of the server (next(): pages and the API in Gatehouse).
      if (i === 1)
        app = fetch(`${t.origin}/api/me`).then(async (res) => {
          order.push('app');
          return `${res.status} ${await res.text()}`;
        });
    }
    const done = await Promise.all(answers);
    expect(await app).toBe('404 next');
    expect(order.indexOf('app')).toBeLessThan(order.length - 1);
    expect(done[1]?.status).toBe(200);
    expect(done.filter((a) => a.status === 413)).toHaveLength(12);
    expect(done.every((a) => a.size < 1024)).toBe(true);
    // Not last: it did not wait for every hostile body sent with it.
    expect(order.indexOf('valid')).toBeLessThan(order.length - 1);
    expect(await t.collector.store.count()).toBe(5);
  });
});

describe('rate limits', () => {
  // 3,500 items of ~1 KB: more than the default caps on one request allow.
  const bigBatches = {
    maxItemsPerRequest: 5000,
    maxBodyBytes: 8 * 1024 * 1024,
    maxDecompressedBytes: 8 * 1024 * 1024,
  };
  it('stores what one source may send of a 3,500-item batch (206) and still takes a visitor from another address', async () => {
    const t = await start({
      maxItemsPerSecondPerSource: 100,
      maxItemsPerSecond: 1000,
      ...bigBatches,
    });
    const flood = await post(t, json(browserBatch(3500)), {}, '127.0.0.2');
    expect(flood.status).toBe(206);
    // The bucket's 100, and what it refilled while the body was parsed (its first item was taken
    // before the body was read, the rest after).
    const stored = flood.body.itemsAccepted;
    expect(stored).toBeGreaterThanOrEqual(100);
    expect(stored).toBeLessThan(150);
    // Exactly the items not stored are named, each with a status the SDKs resend.
    expect(flood.body.errors).toHaveLength(3500 - stored);
    expect(flood.body.errors.every((e, i) => e.index === stored + i && e.statusCode === 429)).toBe(true);
    // No debt: the bucket is empty, not 3,400 items overdrawn.
    expect(flood.headers['retry-after']).toBe('1');

    const visitor = await post(t, json(browserBatch(6)), {}, '127.0.0.3');
    expect(visitor.status).toBe(200);
    expect(await t.collector.store.count()).toBe(stored + 6);
  });

  it('keeps the global limit, but one batch over it locks nobody out for longer than a second', async () => {
    const t = await start({ maxItemsPerSecond: 100, ...bigBatches });
    const flood = await post(t, json(browserBatch(3500)), {}, '127.0.0.2');
    expect(flood.status).toBe(206);
    expect(flood.body.itemsAccepted).toBeGreaterThanOrEqual(100);
    expect(flood.body.itemsAccepted).toBeLessThan(150);
    expect(flood.headers['retry-after']).toBe('1');
    // The next visitor finds the bucket refilling, not 3,400 items in debt (once: 429 ten times out of ten).
    await expect
      .poll(async () => (await post(t, json(browserBatch(1)), {}, '127.0.0.3')).status, { timeout: 5000 })
      .toBe(200);
  });

  it('tells sources apart by the address a trusted proxy adds, and by nothing a client writes', async () => {
    // One item a second per source: a token takes a whole second to come back.
    const behindProxy = await start({ maxItemsPerSecondPerSource: 1, trustProxy: true });
    const direct = await start({ maxItemsPerSecondPerSource: 1 });
    const item = json(browserBatch(1));
    const from = (t: TestCollector, forwardedFor: string) =>
      post(t, item, { 'X-Forwarded-For': forwardedFor }).then((a) => a.status);

    expect(await from(behindProxy, '203.0.113.1')).toBe(200);
    // The entries before the proxy's own are the client's to write: a forged one is the same source.
    expect(await from(behindProxy, '192.0.2.99, 203.0.113.1')).toBe(429);
    expect(await from(behindProxy, '203.0.113.1, 198.51.100.7')).toBe(200);
    // Without a proxy the header is nobody's word: every request here is 127.0.0.1.
    expect(await from(direct, '203.0.113.1')).toBe(200);
    expect(await from(direct, '198.51.100.7')).toBe(429);
  });

  it('believes X-Forwarded-For only from the proxies trusted by address, without ports, never garbage', async () => {
    // The balancer is 127.0.0.1; 127.0.0.2 reaches the collector directly (as a store holder can be).
    const t = await start({ maxItemsPerSecondPerSource: 1, trustProxy: ['127.0.0.1'] });
    const item = json(browserBatch(1));
    const from = (forwardedFor: string, local?: string) =>
      post(t, item, { 'X-Forwarded-For': forwardedFor }, local).then((a) => a.status);

    expect(await from('203.0.113.1:5012')).toBe(200);
    // The same client on another connection (Azure writes the client's port): the same source.
    expect(await from('203.0.113.1:6100')).toBe(429);
    // Past the balancer, what is no address is keyed by the connection (the balancer): no fresh bucket.
    expect(await from('not-an-address')).toBe(200);
    expect(await from('still-not-one')).toBe(429);
    // Directly, the header is nobody's word: neither a fresh bucket nor a victim's.
    expect(await from('198.51.100.7', '127.0.0.2')).toBe(200);
    expect(await from('198.51.100.8', '127.0.0.2')).toBe(429);
    expect(await from('203.0.113.50', '127.0.0.2')).toBe(429);
    expect(await from('203.0.113.50')).toBe(200);
  });
});

/** A trace whose message is `bytes` of random text (which compresses to nothing less). */
function bigTrace(bytes: number): unknown {
  const item = browserEnvelope('trace') as { data: { baseData: { message: string } } };
  item.data.baseData.message = randomBytes(bytes / 2).toString('hex');
  return item;
}

describe('bytes per source', () => {
  it('stores at most the byte budget of one source flooding random text, and still takes others', async () => {
    // Items per second are not what stops it: 1,000 a second is far more than this sends.
    const rate = 20_000;
    const burst = 40_000;
    const t = await start({
      maxItemsPerSecondPerSource: 1000,
      maxBytesPerSecondPerSource: rate,
      maxBytesBurstPerSource: burst,
    });
    const itemBytes = 8000;
    const started = Date.now();
    const statuses = new Set<number>();
    while (Date.now() - started < 2000) {
      const answer = await post(
        t,
        json(Array.from({ length: 10 }, () => bigTrace(itemBytes))),
        {},
        '127.0.0.2',
      );
      statuses.add(answer.status);
      if (answer.status === 429) expect(Number(answer.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    const seconds = (Date.now() - started) / 1000;
    const stored = await t.collector.store.count();
    // Each stored row holds its 8,000 characters of message at least once.
    expect(stored).toBeGreaterThan(0);
    expect(stored * itemBytes).toBeLessThanOrEqual(burst + seconds * rate);
    expect(statuses).toContain(429);
    // Another address has its own bucket.
    expect((await post(t, json([bigTrace(itemBytes)]), {}, '127.0.0.3')).status).toBe(200);
  });
});

describe('refused before the body is read', () => {
  /** Headers and the start of a body that never comes in full, from 127.0.0.1. */
  const unfinished =
    'POST /v2/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 5000\r\n\r\n[{"na';
  // Without the early check, the answer would wait for the body: 408 when the request times out.
  const slow: Partial<HttpLimits> = { requestTimeoutMs: 3000, headersTimeoutMs: 1000 };

  it('answers 429 with Retry-After at once to a source whose item bucket is empty', async () => {
    const t = await start({ maxItemsPerSecondPerSource: 1 }, slow);
    expect((await post(t, json(browserBatch(1)))).status).toBe(200);
    const started = Date.now();
    const answer = await rawExchange(t, unfinished);
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    expect(answer).toMatch(/\r\nRetry-After: 1\r\n/i);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it('answers 429 at once to a source whose byte bucket holds less than the body it declares', async () => {
    const t = await start({ maxBytesPerSecondPerSource: 1000, maxBytesBurstPerSource: 20_000 }, slow);
    const first = await post(t, json([bigTrace(8000), bigTrace(8000), bigTrace(8000)]));
    // What fitted in the burst was stored; the bucket is empty now.
    expect(first.status).toBe(206);
    const answer = await rawExchange(t, unfinished);
    expect(answer).toMatch(/^HTTP\/1\.1 429 /);
    // 5,000 bytes at 1,000 a second.
    expect(answer).toMatch(/\r\nRetry-After: [56]\r\n/i);
  });

  it('keys an IPv6 source by its /64 and an IPv4-mapped one as IPv4, behind a trusted proxy', async () => {
    const t = await start({ maxItemsPerSecondPerSource: 1, trustProxy: true });
    const from = (address: string) =>
      post(t, json(browserBatch(1)), { 'X-Forwarded-For': address }).then((a) => a.status);
    expect(await from('2001:db8:1:2::1')).toBe(200);
    // Another address in the same /64: the same bucket, already empty.
    expect(await from('2001:db8:1:2:a5:3f:9:77')).toBe(429);
    expect(await from('2001:db8:1:3::1')).toBe(200);
    expect(await from('203.0.113.9')).toBe(200);
    expect(await from('::ffff:203.0.113.9')).toBe(429);
  });
});

describe('the disk quota', () => {
  it('answers 507 past the quota, logs it once per interval, and keeps what was stored', async () => {
    const dataDir = tempDataDir();
    const first = await startTestCollector({ dataDir });
    expect((await post(first, json(browserBatch(5)))).status).toBe(200);
    await first.close({ keepData: true });

    const t = await start({ dataDir, maxStoreBytes: 1024 });
    for (let i = 0; i < 3; i++) {
      expect(await post(t, json(browserBatch(2)))).toMatchObject(
        refusedWhole(507, 'Telemetry store is full; items are not stored.'),
      );
    }
    const said = t.logs.filter(([, m]) => m.startsWith('store is full'));
    expect(said).toHaveLength(1);
    expect(said[0]?.[1]).toMatch(/quota is 1024; answered 507 to 1 request$/);
    expect(await t.collector.store.count()).toBe(5);
    // The dashboard's overview says so, and since when (the usage page's banner).
    const { storeFull } = await t.collector.usage.overview();
    expect(storeFull).toMatchObject({ maxBytes: 1024 });
    expect(storeFull?.usedBytes).toBeGreaterThan(1024);
    expect(Date.parse(storeFull?.since ?? '')).toBeLessThanOrEqual(Date.now());
  });

  it('counts what it writes between measurements', async () => {
    const dataDir = tempDataDir();
    const first = await startTestCollector({ dataDir });
    await first.close({ keepData: true });
    const size = await directoryBytes(dataDir);
    // Measured once at start (the next measurement is an hour away): only what it writes can fill it.
    const t = await start({ dataDir, maxStoreBytes: size + 64 * 1024, storeCheckIntervalMs: 3_600_000 });
    const batch = json(browserBatch(100));
    expect((await t.collector.usage.overview()).storeFull).toBeNull();
    expect((await post(t, batch)).status).toBe(200);
    expect((await post(t, batch)).status).toBe(507);
    expect((await t.collector.usage.overview()).storeFull).not.toBeNull();
    expect(await t.collector.store.count()).toBe(100);
  });
});

/** Opens a raw connection, writes `text`, and resolves with everything the server sent once it closes. */
function rawExchange(t: TestCollector, text: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket: Socket = connect(Number(new URL(t.origin).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.on('close', () => resolve(received));
    socket.on('error', reject);
    socket.write(text);
  });
}

/**
 * Sends `head` and all of `body` but its last byte on a connection of its own; `sent` resolves once
 * that is written (or the server closed the connection), `finish()` sends the last byte, `answer`
 * resolves with the status code (0: none) once the connection closes.
 */
function slowSender(port: number, head: string, body: Buffer, { localAddress = '127.0.0.1' } = {}) {
  const socket = connect({ port, host: '127.0.0.1', localAddress });
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  // The answer is read from what was received once the connection closes, whatever ended it.
  socket.on('error', () => undefined);
  const answer = new Promise<number>((resolve) =>
    socket.on('close', () => resolve(Number(/^HTTP\/1\.1 (\d{3}) /.exec(received)?.[1] ?? 0))),
  );
  const sent = new Promise<void>((resolve) => {
    socket.once('close', () => resolve());
    socket.write(head);
    socket.write(body.subarray(0, -1), () => resolve());
  });
  return { sent, answer, finish: () => socket.destroyed || socket.write(body.subarray(-1)) };
}

describe('slow and flooding clients', () => {
  const quick: Partial<HttpLimits> = { requestTimeoutMs: 300, headersTimeoutMs: 200 };

  it('closes a request whose body never ends with 408', async () => {
    const t = await start({}, quick);
    const answer = await rawExchange(
      t,
      'POST /v2/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 1000\r\n\r\n[{"na',
    );
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('closes a connection whose headers never end with 408', async () => {
    const t = await start({}, quick);
    const answer = await rawExchange(t, 'POST /v2/track HTTP/1.1\r\nHost: x\r\nX-Slow: 1');
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
  });

  it('keeps a connection alive between an SDK batch and the next', async () => {
    const t = await start({}, quick);
    const socket = connect(Number(new URL(t.origin).port), '127.0.0.1');
    // Two batches of their own: the collector stores a resent item once.
    const requestText = (body = json(browserBatch(2))) =>
      `POST /v2/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    socket.write(requestText());
    await expect.poll(() => received.match(/HTTP\/1\.1 200 /g)?.length ?? 0).toBe(1);
    socket.write(requestText());
    await expect.poll(() => received.match(/HTTP\/1\.1 200 /g)?.length ?? 0).toBe(2);
    expect(received).toContain('Connection: keep-alive');
    socket.destroy();
    expect(await t.collector.store.count()).toBe(4);
  });

  it('closes connections beyond maxConnections as they arrive, and takes new ones once others close', async () => {
    const t = await start({}, { maxConnections: 3 });
    const port = Number(new URL(t.origin).port);
    const open = Array.from({ length: 3 }, () => connect(port, '127.0.0.1'));
    await Promise.all(open.map((s) => new Promise((resolve) => s.once('connect', resolve))));
    await expect.poll(() => new Promise((resolve) => t.server.getConnections((_, n) => resolve(n)))).toBe(3);
    // The fourth is closed by the server without an answer.
    expect(await rawExchange(t, 'GET /v2/track HTTP/1.1\r\nHost: x\r\n\r\n')).toBe('');
    for (const s of open) s.destroy();
    await expect.poll(() => new Promise((resolve) => t.server.getConnections((_, n) => resolve(n)))).toBe(0);
    expect((await post(t, json(browserBatch(1)))).status).toBe(200);
  });
});

/** The head of a POST to /v2/track with `extra` header lines, for a body of `length` bytes. */
const postHead = (length: number, extra = '') =>
  `POST /v2/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\n${extra}Content-Length: ${length}\r\n\r\n`;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('bytes in flight', () => {
  /** A gzip batch of `count` items as the SDKs send them: some 6 KiB for 300 (290 KB inflated). */
  const gzipBatch = (count: number) => gzipSync(json(browserBatch(count)));

  it('gives back what requests held however their clients left (before, during or after a slow admission), then takes the next post', async () => {
    // Buckets in Redis answer in a millisecond, or after the command time-out when Redis hangs.
    const slowBuckets: RateLimiter = {
      grant: (_source, count) =>
        new Promise((resolve) => setTimeout(() => resolve({ granted: count, retryAfter: 0 }), 200)),
    };
    const t = await start({ rateLimiter: slowBuckets });
    const port = Number(new URL(t.origin).port);
    const body = gzipBatch(300);
    expect(body.length).toBeGreaterThan(4096);
    const head = postHead(body.length, 'Content-Encoding: gzip\r\n');
    /** Sends `sent` of the body and leaves `afterMs` later; resolves once the connection is closed. */
    const abandon = (sent: Buffer, afterMs: number) =>
      new Promise<void>((resolve) => {
        const socket = connect(port, '127.0.0.1');
        socket.on('error', () => undefined);
        socket.on('close', () => resolve());
        socket.write(head);
        socket.write(sent);
        setTimeout(() => socket.destroy(), afterMs);
      });
    // Twenty of each would each have held 4 MiB of the 64 MiB cap for good, counted at their worst.
    await Promise.all([
      ...Array.from({ length: 20 }, () => abandon(body, 0)),
      ...Array.from({ length: 20 }, () => abandon(body, 50)),
      ...Array.from({ length: 20 }, () => abandon(body.subarray(0, 1000), 400)),
    ]);
    await pause(500);
    const answer = await post(t, gzipBatch(300), { 'Content-Encoding': 'gzip' });
    expect(answer.status).toBe(200);
    expect(answer.body.itemsAccepted).toBe(300);
  });

  it('takes 100 SDK batches of 6 KiB gzip at once at the defaults', async () => {
    const t = await start();
    const port = Number(new URL(t.origin).port);
    const bodies = Array.from({ length: 100 }, () => gzipBatch(300));
    expect(bodies[0]?.length).toBeGreaterThan(5 * 1024);
    // Ten servers' SDKs, ten posts in flight each, all but their last byte sent before any ends.
    const senders = bodies.map((body, i) => {
      const socket = slowSender(port, postHead(body.length, 'Content-Encoding: gzip\r\n'), body, {
        localAddress: `127.0.0.${2 + (i % 10)}`,
      });
      return socket;
    });
    await Promise.all(senders.map((s) => s.sent));
    for (const s of senders) s.finish();
    const statuses = await Promise.all(senders.map((s) => s.answer));
    expect(statuses.filter((s) => s !== 200)).toEqual([]);
  }, 30_000);

  it("holds one source's bodies to its share of the bytes in flight, and still takes others'", async () => {
    // A share of 2 MiB (a quarter of the cap); each body of 1,000 items is some 980 KB.
    const t = await start({ maxBytesInFlight: 8 * 1024 * 1024 });
    const port = Number(new URL(t.origin).port);
    const body = Buffer.from(json(browserBatch(1000)));
    expect(body.length).toBeGreaterThan(900 * 1024);
    // Bodies that stop one byte short of their end, as a trickling sender's would.
    const held = Array.from({ length: 4 }, () =>
      slowSender(port, postHead(body.length), body, { localAddress: '127.0.0.2' }),
    );
    await Promise.all(held.map((s) => s.sent));
    await pause(200);
    const other = await post(t, json(browserBatch(1000)), {}, '127.0.0.3');
    expect(other.status).toBe(200);
    // Past its share, the source's bodies were refused as they arrived, with a time to come back.
    for (const s of held) s.finish();
    const statuses = await Promise.all(held.map((s) => s.answer));
    expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(2);
  }, 30_000);

  it('answers 408 and closes the connection of a body that arrives slower than the least rate', async () => {
    const t = await start(
      { minBodyBytesPerSecond: 1000, minBodyRateGraceMs: 300 },
      { requestTimeoutMs: 3000, headersTimeoutMs: 1000 },
    );
    const started = Date.now();
    const answer = await rawExchange(t, `${postHead(5000)}[{"na`);
    expect(answer).toMatch(/^HTTP\/1\.1 408 /);
    expect(answer).toMatch(/\r\nConnection: close\r\n/i);
    // Well before the request time-out, which answers 408 too.
    expect(Date.now() - started).toBeLessThan(2500);
  });

  it('takes a body sent in pieces faster than the least rate', async () => {
    const t = await start({ minBodyBytesPerSecond: 1000, minBodyRateGraceMs: 300 });
    const body = Buffer.from(json(browserBatch(8)));
    const socket = connect(Number(new URL(t.origin).port), '127.0.0.1');
    let received = '';
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('utf8')));
    const closed = once(socket, 'close');
    socket.write(postHead(body.length));
    // Some 8 KB over 600 ms: past the grace, but ahead of 1,000 bytes a second.
    const pieces = 4;
    const step = Math.ceil(body.length / pieces);
    for (let i = 0; i < pieces; i++) {
      socket.write(body.subarray(i * step, (i + 1) * step));
      await pause(150);
    }
    await closed;
    expect(received).toMatch(/^HTTP\/1\.1 200 /);
  });
});

describe('memory under a flood', () => {
  let build: CompiledPackage | undefined;
  beforeAll(() => {
    build = compilePackage();
  }, 120_000);

  /** A kB figure of /proc/<pid>/status (Linux), in bytes: VmHWM is the peak resident set, VmRSS now. */
  const status = (pid: number, field: 'VmHWM' | 'VmRSS') =>
    Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]) *
    1024;

  async function flood(options: Partial<CollectorOptions>) {
    if (!build) throw new Error('not compiled');
    const dataDir = tempDataDir();
    const child = spawn(
      process.execPath,
      [path.join(build.dir, 'test-support', 'collector-child.js'), dataDir, JSON.stringify(options)],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    );
    try {
      if (!child.stdout || child.pid === undefined) throw new Error('no child');
      const [first] = (await once(createInterface({ input: child.stdout }), 'line')) as [string];
      const { port } = JSON.parse(first) as { port: number };
      // Warm: the ingest worker and the store have taken one batch.
      const headFor = (body: Buffer) =>
        `POST /v2/track HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: ${body.length}\r\n\r\n`;
      const warm = Buffer.from(JSON.stringify(browserBatch(10)));
      const warming = slowSender(port, headFor(warm), warm);
      warming.finish();
      await warming.answer;
      const before = status(child.pid, 'VmRSS');
      // 200 senders at once, each with a body of 1 MiB (the largest taken), all but its last byte sent
      // before any finishes (the bodies a server would hold at once); then they finish together. The
      // body is one item of text, refused once read (400): what is measured is reading, decoding and
      // parsing, not storing.
      const body = Buffer.from(`["${'a'.repeat(1024 * 1024 - 4)}"]`);
      const senders = Array.from({ length: 200 }, () => slowSender(port, headFor(body), body));
      await Promise.all(senders.map((s) => s.sent));
      // The server has read what was written once its resident set stops growing.
      let last = 0;
      await expect
        .poll(
          () => {
            const now = status(child.pid ?? 0, 'VmRSS');
            const still = now === last;
            last = now;
            return still;
          },
          { interval: 250, timeout: 20_000 },
        )
        .toBe(true);
      const held = status(child.pid, 'VmRSS');
      for (const s of senders) s.finish();
      const statuses = await Promise.all(senders.map((s) => s.answer));
      return { before, held, peak: status(child.pid, 'VmHWM'), statuses };
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit').catch(() => undefined);
    }
  }

  it('keeps the collector process within its bound of bytes in flight while 200 senders post 1 MiB each', async () => {
    const { before, held, peak, statuses } = await flood({});
    const count = (code: number) => statuses.filter((s) => s === code).length;
    const mib = (bytes: number) => Math.round(bytes / 1024 / 1024);
    console.info(
      `RSS ${mib(before)} MiB warm, ${mib(held)} MiB holding the bodies, peak ${mib(peak)} MiB (${mib(peak - before)} MiB over warm): ${count(400)} read and refused (400), ${count(503)} refused unread (503)`,
    );
    // Measured over warm: Node 20 125-152 MiB, Node 24 155-202 MiB (the refused senders' bodies are read
    // and thrown away while their connections linger: garbage until the next collection); without the
    // cap 432 MiB, growing with the number of senders. The bound: the 32 bodies the cap lets in, each at
    // worst four times over (chunks, the joined body, its text, the parsed value), and as much again of
    // garbage. docs/configuration.md, "Limits for operators", states it.
    expect(peak - before).toBeLessThan(256 * 1024 * 1024);
    // All 200 are one source: its share of the default cap, 16 MiB, counted at 2 MiB per 1 MiB body
    // (buffer and text), holds 8 at once (80 MiB over warm on Node 20); the whole cap would hold 32.
    expect(count(503)).toBeGreaterThan(0);
    // Every sender answered: the ones refused unread too, since their connection lingers while they
    // send the rest (without it, 14 of 200 saw a reset instead of their 503 in a CI run on Node 24).
    expect(count(400)).toBeGreaterThan(0);
    expect(count(400) + count(503)).toBe(200);
  }, 120_000);
});

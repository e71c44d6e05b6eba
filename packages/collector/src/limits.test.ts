/**
 * The collector's limits against hostile senders, over real HTTP: item caps, bounded checking and
 * answers, gzip bombs, fairness between requests, rate limits per source and overall, timeouts,
 * connection floods and the disk quota.
 */
import { request } from 'node:http';
import { connect, type Socket } from 'node:net';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { BreezeResponse, CollectorOptions } from './collector.js';
import type { HttpLimits } from './http-limits.js';
import { directoryBytes } from './store-quota.js';
import { browserBatch, browserEnvelope } from './test-support/browser-envelopes.js';
import { startTestCollector, tempDataDir, type TestCollector } from './test-support/server.js';

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
            body: JSON.parse(text) as BreezeResponse,
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
    const t = await start();
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
    expect(flood.body.itemsAccepted).toBe(100);
    // Exactly the items not stored are named, each with a status the SDKs resend.
    expect(flood.body.errors).toHaveLength(3400);
    expect(flood.body.errors.every((e, i) => e.index === 100 + i && e.statusCode === 429)).toBe(true);
    // No debt: the bucket is empty, not 3,400 items overdrawn.
    expect(flood.headers['retry-after']).toBe('1');

    const visitor = await post(t, json(browserBatch(6)), {}, '127.0.0.3');
    expect(visitor.status).toBe(200);
    expect(await t.collector.store.count()).toBe(106);
  });

  it('keeps the global limit, but one batch over it locks nobody out for longer than a second', async () => {
    const t = await start({ maxItemsPerSecond: 100, ...bigBatches });
    const flood = await post(t, json(browserBatch(3500)), {}, '127.0.0.2');
    expect([flood.status, flood.body.itemsAccepted]).toEqual([206, 100]);
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
  });

  it('counts what it writes between measurements', async () => {
    const dataDir = tempDataDir();
    const first = await startTestCollector({ dataDir });
    await first.close({ keepData: true });
    const size = await directoryBytes(dataDir);
    // Measured once at start (the next measurement is an hour away): only what it writes can fill it.
    const t = await start({ dataDir, maxStoreBytes: size + 64 * 1024, storeCheckIntervalMs: 3_600_000 });
    const batch = json(browserBatch(100));
    expect((await post(t, batch)).status).toBe(200);
    expect((await post(t, batch)).status).toBe(507);
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

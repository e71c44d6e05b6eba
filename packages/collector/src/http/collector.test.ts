import { rmSync } from 'node:fs';
import { request } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import type { BreezeResponse, CollectorOptions } from './collector.js';
import { validateEnvelope, type TelemetryItem } from '../protocol/envelopes.js';
import { openStore, type WritableStore } from '../store/store.js';
import {
  BROWSER_IKEY,
  beaconRequest,
  browserBatch,
  browserEnvelope,
  browserRequest,
} from '../test-support/browser-envelopes.js';
import { startTestCollector, tempDataDir, type TestCollector } from '../test-support/server.js';

let running: TestCollector | undefined;
afterEach(async () => {
  await running?.close();
  running = undefined;
});

async function start(options: Partial<CollectorOptions> = {}): Promise<TestCollector> {
  running = await startTestCollector(options);
  return running;
}

interface Answer {
  status: number;
  headers: Headers;
  body: BreezeResponse;
}

async function post(
  t: TestCollector,
  body: string | Buffer,
  headers: Record<string, string> = { 'Content-Type': 'application/json' },
  path = '/v2/track',
): Promise<Answer> {
  const res = await fetch(t.origin + path, { method: 'POST', body, headers });
  const text = await res.text();
  // No body: refused before the body was read (`{}` here).
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : {}) as BreezeResponse };
}

function accepted(envelope: unknown): TelemetryItem {
  const result = validateEnvelope(envelope, () => true);
  if (!result.ok) throw new Error(result.message);
  return result.item;
}

describe('POST /v2/track and /v2.1/track', () => {
  it('stores the browser SDK batch (XHR) and its sendBeacon variant (text/plain)', async () => {
    const t = await start();
    const xhr = browserRequest(browserBatch(14));
    expect(await post(t, xhr.body, xhr.headers)).toMatchObject({
      status: 200,
      body: { itemsReceived: 14, itemsAccepted: 14, errors: [] },
    });
    const beacon = beaconRequest(browserBatch(7));
    expect((await post(t, beacon.body, beacon.headers, '/v2.1/track?ikey=x')).status).toBe(200);
    expect(await t.collector.store.count()).toBe(21);
    expect(await t.collector.store.count({ type: 'exception' })).toBe(3);
  });

  it('stores gzipped newline-delimited JSON (the Node.js SDK) and a single envelope', async () => {
    const t = await start();
    const lines = browserBatch(3)
      .map((e) => JSON.stringify(e))
      .join('\n');
    const answer = await post(t, gzipSync(lines), {
      'Content-Type': 'application/x-json-stream',
      'Content-Encoding': 'gzip',
    });
    expect(answer).toMatchObject({ status: 200, body: { itemsReceived: 3, itemsAccepted: 3 } });
    expect((await post(t, JSON.stringify(browserEnvelope('event')))).body.itemsAccepted).toBe(1);
    expect(await t.collector.store.count()).toBe(4);
  });

  it('answers 206 with each refused item and its reason, storing the rest', async () => {
    const t = await start();
    const batch: unknown[] = browserBatch(4);
    batch[1] = { ...browserEnvelope('event'), iKey: 'not-ours' };
    batch[3] = { ...browserEnvelope('trace'), time: 42 };
    const answer = await post(t, JSON.stringify(batch));
    expect(answer.status).toBe(206);
    expect(answer.body).toEqual({
      itemsReceived: 4,
      itemsAccepted: 2,
      errors: [
        { index: 1, statusCode: 400, message: 'Invalid instrumentation key' },
        { index: 3, statusCode: 400, message: "Field 'time' is not a string." },
      ],
    });
    expect(await t.collector.store.count()).toBe(2);
  });

  it('answers 400 when no item is accepted', async () => {
    const t = await start();
    const answer = await post(t, JSON.stringify([{ ...browserEnvelope('event'), iKey: 'nope' }]));
    expect(answer).toMatchObject({ status: 400, body: { itemsReceived: 1, itemsAccepted: 0 } });
  });

  it('refuses bad bodies with the right status, stays up, and keeps what it had', async () => {
    const t = await start({ maxBodyBytes: 64 * 1024, maxDecompressedBytes: 256 * 1024 });
    const good = browserRequest(browserBatch(7));
    expect((await post(t, good.body, good.headers)).status).toBe(200);
    const before = [];
    for await (const e of t.collector.store.export()) before.push(e);

    const refusals: [string | Buffer, Record<string, string>, number, string][] = [
      ['[{"name":', { 'Content-Type': 'application/json' }, 400, 'Body is not valid JSON.'],
      ['', { 'Content-Type': 'application/json' }, 400, 'Body is empty.'],
      ['[]', { 'Content-Type': 'application/json' }, 400, 'Body holds no items.'],
      ['not gzip', { 'Content-Encoding': 'gzip' }, 400, 'Body is not valid gzip.'],
      ['[1]', { 'Content-Encoding': 'compress' }, 415, "Content-Encoding 'compress' is not supported."],
      [
        'x'.repeat(70 * 1024),
        { 'Content-Type': 'application/json' },
        413,
        'Body is larger than 65536 bytes.',
      ],
      [
        gzipSync(' '.repeat(300 * 1024)),
        { 'Content-Encoding': 'gzip' },
        413,
        'Decompressed body is larger than 262144 bytes.',
      ],
    ];
    for (const [body, headers, status, message] of refusals) {
      const answer = await post(t, body, headers);
      expect({ status: answer.status, body: answer.body }).toEqual({
        status,
        body: { itemsReceived: 0, itemsAccepted: 0, errors: [{ index: 0, statusCode: status, message }] },
      });
    }
    // Wrong types, missing fields, over-long strings and deep nesting, in one batch: each refused alone.
    const deep = '{"deep":'.repeat(5000) + '1' + '}'.repeat(5000);
    const bad = [
      { ...browserEnvelope('event'), tags: 'session' },
      { ...browserEnvelope('event'), data: { baseType: 'EventData', baseData: {} } },
      { ...browserEnvelope('event'), name: 'n'.repeat(2000) },
      { ...browserEnvelope('event'), extra: 'DEEP' },
      'not an envelope',
    ];
    const answer = await post(t, JSON.stringify(bad).replace('"DEEP"', deep));
    expect(answer.status).toBe(400);
    expect(answer.body.errors.map((e) => [e.index, e.statusCode])).toEqual([
      [0, 400],
      [1, 400],
      [2, 400],
      [3, 400],
      [4, 400],
    ]);
    expect(answer.body.errors.map((e) => e.message)).toEqual([
      "Field 'tags' is not an object.",
      "Field 'data.baseData.name' is required.",
      "Field 'name' is longer than 1024 characters.",
      'Item is nested too deeply.',
      'Item is not a JSON object.',
    ]);

    // Still serving, and nothing stored before was touched.
    expect((await post(t, good.body, good.headers)).status).toBe(200);
    const after = [];
    for await (const e of t.collector.store.export()) after.push(e);
    // (The same batch again: each of its items is stored once.)
    expect(after).toEqual(before);
  });

  it('stores a batch once when its copy (a beacon on page hide) arrives while the first is in flight', async () => {
    const t = await start();
    const envelopes = browserBatch(55);
    const xhr = browserRequest(envelopes);
    const beacon = beaconRequest(envelopes);
    const answers = await Promise.all([
      post(t, xhr.body, xhr.headers),
      post(t, beacon.body, beacon.headers),
      post(t, xhr.body, xhr.headers),
    ]);
    // Every copy is acknowledged (the sender may drop it), and each item is stored once.
    expect(answers.map((a) => [a.status, a.body.itemsAccepted])).toEqual([
      [200, 55],
      [200, 55],
      [200, 55],
    ]);
    expect(await t.collector.store.count()).toBe(55);
  });

  it('stores each item once when its sender went away before the answer and then sent it again', async () => {
    const t = await start();
    const store = t.collector.store;
    const append = store.append.bind(store);
    // A slow disk: the answers come well after the senders have given up.
    store.append = async (items) => {
      await new Promise((resolve) => setTimeout(resolve, 300));
      return append(items);
    };
    const [first, second, later] = [browserBatch(25), browserBatch(6), browserBatch(24)];
    const gone = (envelopes: unknown[]) =>
      new Promise<void>((resolve) => {
        const req = request(`${t.origin}/v2/track`, {
          method: 'POST',
          headers: { 'Content-Type': 'application/json' },
        });
        req.on('error', () => resolve());
        // The whole body sent, then the connection dropped before any answer.
        req.end(browserRequest(envelopes).body, () =>
          setTimeout(() => {
            req.destroy();
            resolve();
          }, 50),
        );
      });
    await gone(first);
    await gone(second);
    const resent = await Promise.all([
      post(t, browserRequest(first).body),
      post(t, browserRequest([...second, ...first.slice(0, 3), ...later]).body),
    ]);
    expect(resent.map((a) => a.status)).toEqual([200, 200]);
    store.append = append;
    expect(await store.count()).toBe(25 + 6 + 24);
  });

  it('answers 206 over the configured rate, each item over it marked retriable, then 429 unread', async () => {
    const t = await start({ maxItemsPerSecond: 2 });
    const batch = browserRequest(browserBatch(8));
    // The bucket holds one second's worth: two items are stored, the six others are named 429.
    const partial = await post(t, batch.body, batch.headers);
    expect(partial.status).toBe(206);
    expect(Number(partial.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(partial.body.itemsAccepted).toBe(2);
    expect(partial.body.errors.map((e) => [e.index, e.statusCode])).toEqual(
      [2, 3, 4, 5, 6, 7].map((i) => [i, 429]),
    );
    // Nothing left (a token takes half a second to come back): refused before its body is read, with
    // no answer body, which every SDK takes as "resend the whole batch".
    const answer = await post(t, batch.body, batch.headers);
    expect(answer.status).toBe(429);
    expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(answer.body).toEqual({});
    expect(await t.collector.store.count()).toBe(2);
  });

  it('answers 503 with Retry-After when the store fails, and logs it', async () => {
    const t = await start();
    const append = t.collector.store.append.bind(t.collector.store);
    t.collector.store.append = () => Promise.reject(new Error('disk full'));
    const mixed = [...browserBatch(2), { ...browserEnvelope('event'), iKey: 'other' }];
    const answer = await post(t, JSON.stringify(mixed));
    expect(answer.status).toBe(503);
    expect(answer.headers.get('retry-after')).toBe('10');
    // Valid items are marked 503, which the SDKs resend; the invalid one keeps its 400.
    expect(answer.body).toEqual({
      itemsReceived: 3,
      itemsAccepted: 0,
      errors: [
        { index: 0, statusCode: 503, message: 'Store is unavailable; retry later.' },
        { index: 1, statusCode: 503, message: 'Store is unavailable; retry later.' },
        { index: 2, statusCode: 400, message: 'Invalid instrumentation key' },
      ],
    });
    const batch = browserRequest(browserBatch(3));
    expect(t.logs).toContainEqual(['error', 'store write failed: Error: disk full']);
    t.collector.store.append = append;
    expect((await post(t, batch.body, batch.headers)).status).toBe(200);
  });

  it('answers 503 with Retry-After naming every item, without validating the batch, while the store is behind', async () => {
    const t = await start();
    const store = t.collector.store as WritableStore;
    const pending = store.pending.bind(store);
    store.pending = () => 10_000_000;
    const busy = (count: number) => ({
      itemsReceived: count,
      itemsAccepted: 0,
      errors: Array.from({ length: count }, (_, index) => ({
        index,
        statusCode: 503,
        message: 'Store is busy; retry later.',
      })),
    });
    const batch = browserRequest(browserBatch(3));
    for (let i = 0; i < 3; i++) {
      const answer = await post(t, batch.body, batch.headers);
      expect(answer.status).toBe(503);
      expect(answer.headers.get('retry-after')).toBe('10');
      expect(answer.body).toEqual(busy(3));
    }
    // The Node.js SDK 2.x's batch (gzip NDJSON) resends only what is named: all 250 must be.
    const lines = browserBatch(250).map((e) => JSON.stringify(e));
    const ndjson = await post(t, gzipSync(lines.join('\n')), {
      'Content-Type': 'application/x-json-stream',
      'Content-Encoding': 'gzip',
    });
    expect(ndjson.status).toBe(503);
    expect(ndjson.body).toEqual(busy(250));
    // Said once, not for every request turned away.
    expect(t.logs.filter(([, m]) => m.startsWith('store is behind'))).toEqual([
      ['warn', 'store is behind (10000000 items waiting); answered 503 to 1 request'],
    ]);
    store.pending = pending;
    expect((await post(t, batch.body, batch.headers)).status).toBe(200);
    expect(await store.count()).toBe(3);
  });

  it('calls next() for other paths and methods, like Express middleware', async () => {
    const t = await start();
    for (const [method, path] of [
      ['GET', '/v2/track'],
      ['POST', '/v2/trackx'],
      ['POST', '/api/me'],
    ] as const) {
      const res = await fetch(t.origin + path, { method, ...(method === 'POST' ? { body: '[]' } : {}) });
      expect([res.status, await res.text()]).toEqual([404, 'next']);
    }
  });
});

describe('CORS', () => {
  it('answers the preflight of an allowed origin', async () => {
    const t = await start();
    const res = await fetch(`${t.origin}/v2/track`, {
      method: 'OPTIONS',
      headers: {
        Origin: 'https://app.example',
        'Access-Control-Request-Method': 'POST',
        'Access-Control-Request-Headers': 'content-type',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('https://app.example');
    expect(res.headers.get('access-control-allow-methods')).toContain('POST');
    expect(res.headers.get('access-control-allow-headers')).toContain('Content-Type');
    const posted = await post(t, browserRequest(browserBatch(1)).body, {
      'Content-Type': 'application/json',
      Origin: 'https://app.example',
    });
    expect(posted.headers.get('access-control-allow-origin')).toBe('https://app.example');
  });

  it('refuses other origins, but not the app posting to its own host', async () => {
    const t = await start();
    const preflight = await fetch(`${t.origin}/v2/track`, {
      method: 'OPTIONS',
      headers: { Origin: 'https://evil.example', 'Access-Control-Request-Method': 'POST' },
    });
    expect(preflight.status).toBe(403);
    expect(preflight.headers.get('access-control-allow-origin')).toBeNull();
    const beacon = beaconRequest(browserBatch(1));
    const foreign = await post(t, beacon.body, { ...beacon.headers, Origin: 'https://evil.example' });
    expect(foreign.status).toBe(403);
    const own = await post(t, beacon.body, { ...beacon.headers, Origin: t.origin });
    expect(own.status).toBe(200);
    expect(await t.collector.store.count()).toBe(1);
  });
});

describe('time window and size', () => {
  it('refuses items dated outside now-48h..now+5min or past retention, with the reason, and keeps the rest', async () => {
    const t = await start({ retentionDays: 1 });
    const at = (ms: number) => ({
      ...browserEnvelope('event'),
      time: new Date(Date.now() + ms).toISOString(),
    });
    const hour = 3_600_000;
    const batch = [
      at(-30 * hour),
      at(-49 * hour),
      at(10 * 60_000),
      at(-23 * hour),
      at(60_000),
      at(-50 * 365 * 24 * hour),
    ];
    const answer = await post(
      t,
      JSON.stringify([...batch, { ...browserEnvelope('event'), time: '9999-01-01T00:00:00Z' }]),
    );
    expect(answer.status).toBe(206);
    expect(answer.body.itemsAccepted).toBe(2);
    expect(answer.body.errors.map((e) => [e.index, e.statusCode])).toEqual([
      [0, 400],
      [1, 400],
      [2, 400],
      [5, 400],
      [6, 400],
    ]);
    const [retention, past, future] = answer.body.errors.map((e) => e.message);
    expect(retention).toMatch(
      /^Field 'time' on type 'Envelope' is older than the retention period \(1 days\)\. Expected: time >= \S+Z, Actual: \S+Z\.$/,
    );
    expect(past).toMatch(/^Field 'time' on type 'Envelope' is older than the retention period/);
    expect(future).toMatch(
      /^Field 'time' on type 'Envelope' is later than the allowed max date\. Expected: time <= /,
    );
    expect(await t.collector.store.count()).toBe(2);

    // Without retention, the window itself: 48 hours back.
    await t.close();
    const wide = await start({ retentionDays: 0, timeWindow: { futureMs: 3_600_000 } });
    const second = await post(wide, JSON.stringify([at(-47 * hour), at(-49 * hour), at(50 * 60_000)]));
    expect(second.body.errors).toEqual([
      {
        index: 1,
        statusCode: 400,
        message: expect.stringMatching(
          /^Field 'time' on type 'Envelope' is older than the allowed min date\./,
        ) as string,
      },
    ]);
  });

  it('stores an item padded with 8 MiB of whitespace (an 8 KB gzip body) compact, and keeps loading', async () => {
    const t = await start({ maxDecompressedBytes: 16 * 1024 * 1024 });
    const envelope = browserEnvelope('event');
    const padded = JSON.stringify([envelope]).replace('"name":', `"name":${' '.repeat(8 * 1024 * 1024)}`);
    const body = gzipSync(padded, { level: 9 });
    expect(body.length).toBeLessThan(16 * 1024);
    expect(
      (await post(t, body, { 'Content-Type': 'application/json', 'Content-Encoding': 'gzip' })).status,
    ).toBe(200);
    const rows = await (t.collector.store as WritableStore).read(
      'SELECT octet_length(envelope::BLOB)::INTEGER AS bytes FROM items',
    );
    expect(rows).toEqual([{ bytes: Buffer.byteLength(JSON.stringify(envelope)) }]);
    const next = browserRequest(browserBatch(5));
    expect((await post(t, next.body, next.headers)).status).toBe(200);
    expect(await t.collector.store.count()).toBe(6);
  });
});

describe('store', () => {
  it('exports by time and type, in the envelope shape', async () => {
    const t = await start({ instrumentationKeys: 'any' });
    const old = { ...browserEnvelope('event'), time: new Date(Date.now() - 47 * 3_600_000).toISOString() };
    expect((await post(t, JSON.stringify([old, ...browserBatch(7)]))).status).toBe(200);
    const since = new Date(Date.now() - 60_000);
    expect(await t.collector.store.count({ since })).toBe(7);
    const events = [];
    for await (const e of t.collector.store.export({ type: 'event' })) events.push(e);
    expect(events).toHaveLength(2);
    expect(events[0]).toEqual(old);
    expect(events[1]?.data.baseType).toBe('EventData');
    expect(events[1]?.iKey).toBe(BROWSER_IKEY);
  });

  it('prunes items past retentionDays at start', async () => {
    const dataDir = tempDataDir();
    // Stored while the retention was longer (the collector itself refuses items older than retention).
    const first = await openStore(dataDir);
    const old = { ...browserEnvelope('event'), time: new Date(Date.now() - 40 * 86_400_000).toISOString() };
    await first.append([old, browserEnvelope('event')].map((e) => accepted(e)));
    await first.close();

    const t = await start({ dataDir, retentionDays: 30 });
    expect(await t.collector.store.count()).toBe(1);
    expect(t.logs).toContainEqual(['info', 'retention: removed 1 items older than 30 days']);
  });

  it('creates its data dir on first start and reopens it', async () => {
    const root = tempDataDir();
    const dataDir = path.join(root, 'nested', 'telemetry');
    try {
      const t = await start({ dataDir });
      expect((await post(t, browserRequest(browserBatch(2)).body)).status).toBe(200);
      await t.close({ keepData: true });
      running = undefined;
      const store = await openStore(dataDir);
      expect(await store.count()).toBe(2);
      await store.close();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});

it("gives the store's database the memory the collector is told (TELEMETRY_STORE_MEMORY_MB)", async () => {
  const t = await start({ memoryLimitMb: 300 });
  const [row] = await t.collector.sink.store.read("SELECT current_setting('memory_limit') AS memory_limit");
  // DuckDB counts in MB (10^6 bytes) and answers in MiB.
  expect(row?.memory_limit).toBe('286.1 MiB');
});

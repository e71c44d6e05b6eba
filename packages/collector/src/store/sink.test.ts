import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCollector, type CollectorFront } from '../http/collector.js';
import { RS, type PackedItems } from '../protocol/packed.js';
import type { ItemSink } from './sink.js';
import { BROWSER_IKEY, browserBatch, browserRequest } from '../test-support/browser-envelopes.js';

/** A sink that keeps what it is given, and whose room, fullness and failures the test sets. */
class RecordingSink implements ItemSink {
  batches: PackedItems[] = [];
  room = true;
  fullBecause: string | undefined;
  failure: Error | undefined;
  closed = false;
  append(items: PackedItems): Promise<void> {
    if (this.failure) return Promise.reject(this.failure);
    this.batches.push(items);
    return Promise.resolve();
  }
  hasRoom(): boolean {
    return this.room;
  }
  backlog(): number {
    return 42;
  }
  full(): string | undefined {
    return this.fullBecause;
  }
  close(): Promise<void> {
    this.closed = true;
    return Promise.resolve();
  }
}

let server: http.Server | undefined;
let front: CollectorFront | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await front?.close();
  server = front = undefined;
});

async function startFront(sink: ItemSink, logs: string[] = []): Promise<string> {
  front = await createCollector({
    sink,
    instrumentationKeys: [BROWSER_IKEY],
    allowedOrigins: [],
    ingestWorker: false,
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
  const started = front;
  server = http.createServer((req, res) => started.handle(req, res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v2/track`;
}

async function post(url: string, count: number) {
  const { body, headers } = browserRequest(browserBatch(count));
  const res = await fetch(url, { method: 'POST', body, headers });
  return { status: res.status, retryAfter: res.headers.get('retry-after'), body: await res.text() };
}

describe('the collector front over a sink', () => {
  it('hands the accepted items, packed, to its sink and answers once the sink has them', async () => {
    const sink = new RecordingSink();
    const url = await startFront(sink);
    expect((await post(url, 3)).status).toBe(200);
    expect(sink.batches).toHaveLength(1);
    const [batch] = sink.batches;
    expect(batch?.count).toBe(3);
    expect(batch?.keys).toHaveLength(3);
    expect(batch?.chunks.join('').split(RS)).toHaveLength(4); // three rows, each ending with RS
    await front?.close();
    front = undefined;
    expect(sink.closed).toBe(true);
  });

  it('answers 503 with Retry-After when the sink fails or has no room, 507 when it is full', async () => {
    const sink = new RecordingSink();
    const logs: string[] = [];
    const url = await startFront(sink, logs);
    sink.failure = new Error('store holder unreachable');
    expect(await post(url, 2)).toMatchObject({ status: 503, retryAfter: '10' });
    sink.failure = undefined;
    sink.room = false;
    expect(await post(url, 2)).toMatchObject({ status: 503, retryAfter: '10' });
    sink.room = true;
    sink.fullBecause = 'the disk holds too much';
    expect((await post(url, 2)).status).toBe(507);
    expect(sink.batches).toHaveLength(0);
    expect(logs).toEqual([
      'error: store write failed: Error: store holder unreachable',
      'warn: store is behind (42 items waiting); answered 503 to 1 request',
      'error: store is full: the disk holds too much; answered 507 to 1 request',
    ]);
  });
});

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { createCollector, type Collector, type CollectorFront } from '../http/collector.js';
import {
  APPEND_PATH,
  decodePacked,
  encodePacked,
  holdsToken,
  PACKED_TYPE,
  PING_PATH,
} from './internal-api.js';
import { packItems } from '../protocol/packed.js';
import { validateEnvelope, type TelemetryItem } from '../protocol/envelopes.js';
import { createStoreHolderApi } from './store-holder.js';
import { createForwardingSink, createRemoteQueries, StoreUnavailable } from './store-holder-client.js';
import type { Envelope } from '../store/store.js';
import {
  BROWSER_IKEY,
  browserBatch,
  browserContext,
  browserEnvelope,
  browserRequest,
} from '../test-support/browser-envelopes.js';
import { tempDataDir } from '../test-support/server.js';

const TOKEN = 'a-collector-token-of-32-characters-or-more';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

async function listen(listener: http.RequestListener, port = 0): Promise<string> {
  const server = http.createServer(listener);
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  closers.push(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const frontOptions = { instrumentationKeys: [BROWSER_IKEY], allowedOrigins: [], ingestWorker: false };

/** A store holder: the embedded store's collector, and its internal API, on one server (as Gatehouse's). */
async function startStoreHolder(logs: string[] = [], port = 0) {
  const collector = await createCollector({
    ...frontOptions,
    dataDir: tempDataDir(),
    retentionDays: 0,
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
  closers.push(() => collector.close());
  const api = createStoreHolderApi({
    token: TOKEN,
    sink: collector.sink,
    queries: collector.sink,
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
  const url = await listen((req, res) => api(req, res, () => collector.handle(req, res)), port);
  return { collector, url, logs };
}

/** A replica forwarding to `url`: the collector's front over a forwarding sink. */
async function startReplica(
  url: string,
  logs: string[] = [],
  waitForStoreHolderMs = 0,
  fetchImpl: typeof fetch = fetch,
) {
  const front: CollectorFront = await createCollector({
    ...frontOptions,
    sink: createForwardingSink({
      url,
      token: TOKEN,
      appendTimeoutMs: 2_000,
      waitForStoreHolderMs,
      fetch: fetchImpl,
    }),
    log: (level, message) => logs.push(`${level}: ${message}`),
  });
  closers.push(() => front.close());
  return `${await listen((req, res) => front.handle(req, res))}/v2/track`;
}

async function track(url: string, envelopes: unknown[]) {
  const { body, headers } = browserRequest(envelopes);
  const res = await fetch(url, { method: 'POST', body, headers });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as { itemsAccepted: number; errors: unknown[] },
  };
}

const item = (envelope: unknown): TelemetryItem => {
  const result = validateEnvelope(envelope, () => true);
  if (!result.ok) throw new Error(result.message);
  return result.item;
};

describe('a replica forwarding to the store holder', () => {
  it('answers 200 once the store holder has the items; a batch sent again is stored once', async () => {
    const holder = await startStoreHolder();
    const replica = await startReplica(holder.url);
    const batch = browserBatch(5);
    expect(await track(replica, batch)).toMatchObject({ status: 200, body: { itemsAccepted: 5 } });
    expect(await holder.collector.store.count()).toBe(5);
    // The SDK resends a batch whose answer it lost: the store holder keeps one copy of each item.
    expect((await track(replica, batch)).status).toBe(200);
    expect((await track(`${holder.url}/v2/track`, batch)).status).toBe(200);
    expect(await holder.collector.store.count()).toBe(5);
  });

  it('answers 503 with Retry-After while the store holder is unreachable, and logs it once per interval', async () => {
    const gone = await listen(() => undefined);
    await closers.pop()?.(); // nothing listens there any more
    const logs: string[] = [];
    const replica = await startReplica(gone, logs);
    for (let i = 0; i < 2; i++) {
      const answer = await track(replica, browserBatch(2));
      expect(answer).toMatchObject({ status: 503, retryAfter: '10' });
      expect(answer.body.errors).toHaveLength(2); // every item named, so every SDK resends it
    }
    expect(logs).toEqual([
      expect.stringMatching(
        /^warn: the store holder at .* is unreachable \(ECONNREFUSED\); answered 503 to 1 request$/,
      ),
    ]);
  });

  it('waits for a store holder that is restarting, and answers 200 once it has the items', async () => {
    // A free port, then nothing there until the replica has found it so; the store holder starts then.
    const url = await listen(() => undefined);
    await closers.pop()?.();
    let refused: () => void = () => undefined;
    const refusedOnce = new Promise<void>((resolve) => (refused = resolve));
    const watching: typeof fetch = (input, init) =>
      fetch(input, init).catch((error: unknown) => {
        refused();
        throw error;
      });
    const replica = await startReplica(url, [], 10_000, watching);
    const answer = track(replica, browserBatch(3));
    await refusedOnce;
    const holder = await startStoreHolder([], Number(new URL(url).port));
    expect(await answer).toMatchObject({ status: 200, body: { itemsAccepted: 3 } });
    expect(await holder.collector.store.count()).toBe(3);
  });

  it("passes on the store holder's 503 and its Retry-After when its store is behind", async () => {
    const holder = await startStoreHolder();
    const replica = await startReplica(holder.url);
    holder.collector.sink.hasRoom = () => false;
    expect(await track(replica, browserBatch(2))).toMatchObject({ status: 503, retryAfter: '10' });
    expect(await holder.collector.store.count()).toBe(0);
  });
});

describe("the store holder's internal API", () => {
  it('refuses every request without the token, and says nothing more than 401', async () => {
    const { collector, url } = await startStoreHolder();
    const packed = encodePacked(packItems([item(browserEnvelope('event'))], true));
    const requests: [string, RequestInit][] = [
      [APPEND_PATH, { method: 'POST', body: packed, headers: { 'Content-Type': PACKED_TYPE } }],
      [PING_PATH, {}],
      ['/internal/usage/overview', { method: 'POST', body: '[{}]' }],
      ['/internal/anything', {}],
    ];
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${TOKEN}x`, TOKEN]) {
      for (const [path, init] of requests) {
        const res = await fetch(url + path, {
          ...init,
          headers: {
            ...(init.headers as object),
            ...(authorization ? { Authorization: authorization } : {}),
          },
        });
        expect(res.status, `${path} with ${authorization}`).toBe(401);
        expect(res.headers.get('cache-control')).toBe('no-store');
        expect(await res.text()).toBe('');
      }
    }
    expect(await collector.store.count()).toBe(0);
    const ok = await fetch(url + PING_PATH, { headers: { Authorization: `Bearer ${TOKEN}` } });
    expect(ok.status).toBe(204);
  });

  it('refuses packed items whose counts do not agree, storing nothing of them', async () => {
    const { collector, url } = await startStoreHolder();
    const good = encodePacked(
      packItems([item(browserEnvelope('event')), item(browserEnvelope('pageview'))], true),
    );
    const text = good.toString('utf8');
    const post = (body: string) =>
      fetch(url + APPEND_PATH, {
        method: 'POST',
        body,
        headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': PACKED_TYPE },
      });
    expect((await post(`3${text.slice(1)}`)).status).toBe(400); // count says 3, two keys
    expect((await post(text.slice(0, -5))).status).toBe(400); // the last row cut
    expect((await post('no header')).status).toBe(400);
    expect(await collector.store.count()).toBe(0);
    expect((await post(text)).status).toBe(200);
    expect(await collector.store.count()).toBe(2);
  });

  it('answers the queries on its list and the registry, and 404 to any other name', async () => {
    const { url } = await startStoreHolder();
    const ask = (name: string) =>
      fetch(`${url}/internal/usage/${name}`, {
        method: 'POST',
        body: JSON.stringify([{ range: '24h' }]),
        headers: { Authorization: `Bearer ${TOKEN}` },
      });
    for (const name of ['overview', 'sessions', 'signedInUserIds', 'usageTimeseries', 'usagePages'])
      expect((await ask(name)).status, name).toBe(200);
    // The panels' queries are asked by their registry names only (dashboard/dashboard-queries.ts).
    for (const name of ['timeseries', 'pages', 'exceptions', 'dependencies', 'toString'])
      expect((await ask(name)).status, name).toBe(404);
  });
});

describe('usage queries answered by the store holder', () => {
  it('gives what the local queries give, streams one user’s items, and erases them', async () => {
    const holder = await startStoreHolder();
    const replica = await startReplica(holder.url);
    const user = browserContext({ sessionId: 'remote-s', userId: 'remote-u' });
    const other = browserContext({ sessionId: 'other-s', userId: 'other-u' });
    const mine = ['pageview', 'event', 'exception', 'dependency'] as const;
    const envelopes = [
      ...mine.map((kind) => browserEnvelope(kind, user)),
      browserEnvelope('pageview', other),
    ];
    expect((await track(replica, envelopes)).status).toBe(200);

    const remote = createRemoteQueries({ url: holder.url, token: TOKEN });
    const local: Pick<Collector, 'usage' | 'dashboard'> = holder.collector;
    const options = { range: '24h' as const, now: Date.now() };
    expect(await remote.usage.overview(options)).toEqual(await local.usage.overview(options));
    // The panels' queries by the registry's names: each forwarded as it is registered.
    expect(await remote.dashboard('usagePages', options)).toEqual(
      await local.dashboard('usagePages', options),
    );
    expect(await remote.dashboard('usageEvents', options)).toEqual(
      await local.dashboard('usageEvents', options),
    );
    const steps = {
      ...options,
      step: [
        { kind: 'page' as const, name: 'Home' },
        { kind: 'event' as const, name: 'Signed in' },
      ],
    };
    expect(await remote.dashboard('usageFunnel', steps)).toEqual(await local.dashboard('usageFunnel', steps));
    expect(await remote.usage.sessionTimeline('remote-s')).toEqual(
      await local.usage.sessionTimeline('remote-s'),
    );
    expect(await remote.usage.sessionTimeline('no-such-session')).toBeNull();

    const exported: Envelope[] = [];
    for await (const envelope of remote.usage.userItems('remote-u')) exported.push(envelope);
    const expected: Envelope[] = [];
    for await (const envelope of local.usage.userItems('remote-u')) expected.push(envelope);
    expect(exported).toHaveLength(4);
    expect(exported).toEqual(expected);

    expect(await remote.usage.eraseUser('remote-u')).toBe(4);
    expect(await holder.collector.store.count()).toBe(1);
  });

  it("writes annotations into the store holder's file only, and reads them back through it", async () => {
    const holder = await startStoreHolder();
    const remote = createRemoteQueries({ url: holder.url, token: TOKEN });
    const added = await remote.annotations.addAnnotation({
      time: new Date().toISOString(),
      note: 'Release 2.4',
      author: 'admin-1',
    });
    const options = { range: '24h' as const, now: Date.now() };
    expect((await holder.collector.annotations.listAnnotations(options)).annotations).toEqual([added]);
    expect(await remote.annotations.listAnnotations(options)).toEqual(
      await holder.collector.annotations.listAnnotations(options),
    );
    expect(await remote.annotations.annotationsBy('admin-1')).toEqual([added]);
    expect(await remote.annotations.deleteAnnotation(added.id)).toEqual(added);
    expect(await remote.annotations.deleteAnnotation(added.id)).toBeNull();
  });

  it('throws StoreUnavailable (503 for the API) while the store holder is unreachable', async () => {
    const gone = await listen(() => undefined);
    await closers.pop()?.();
    const remote = createRemoteQueries({ url: gone, token: TOKEN });
    await expect(remote.usage.overview({ range: '24h' })).rejects.toBeInstanceOf(StoreUnavailable);
    const iterate = async () => {
      for await (const _ of remote.usage.userItems('u')) void _;
    };
    await expect(iterate()).rejects.toMatchObject({ status: 503, code: 'store_unavailable' });
  });
});

describe('the wire format and the token', () => {
  it('packs items for the wire and back unchanged', () => {
    const packed = packItems([item(browserEnvelope('event')), item(browserEnvelope('exception'))], true);
    expect(decodePacked(encodePacked(packed))).toEqual({ ...packed, chunks: [packed.chunks.join('')] });
    expect(decodePacked(encodePacked(packItems([])))).toEqual({ count: 0, chunks: [], keys: [] });
  });

  it('compares the Authorization header with the token', () => {
    expect(holdsToken(`Bearer ${TOKEN}`, TOKEN)).toBe(true);
    expect(holdsToken(`Bearer ${TOKEN.slice(0, -1)}`, TOKEN)).toBe(false);
    expect(holdsToken(undefined, TOKEN)).toBe(false);
    expect(() => createStoreHolderApi({ token: 'short', sink: {} as never, log: () => undefined })).toThrow(
      RangeError,
    );
  });
});

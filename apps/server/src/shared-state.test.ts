import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { DpopProofError, DpopReplayCheckUnavailableError, DpopTooManyProofsError } from './auth/dpop.js';
import { SharedState } from './shared-state.js';
import { captureLogs } from './test-support/logs.js';
import { startRedisServer } from './test-support/redis-server.js';

let redis: Awaited<ReturnType<typeof startRedisServer>>;
const opened: SharedState[] = [];
let prefixes = 0;

/** A replica's view of the shared state: its own connection, the test's own key prefix. */
async function replica(prefix: string, logger = captureLogs().logger) {
  const state = new SharedState({ url: redis.url, logger, prefix, commandTimeoutMs: 500 });
  opened.push(state);
  await state.connect();
  return state;
}
const freshPrefix = () => `test${++prefixes}:`;
const now = () => Date.now() / 1000;

beforeAll(async () => {
  redis = await startRedisServer();
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((state) => state.close()));
  await redis.ensureRunning();
});
afterAll(async () => {
  await redis?.close();
});

describe('the shared DPoP replay table', () => {
  it('refuses at one replica a proof another replica accepted', async () => {
    const prefix = freshPrefix();
    const [a, b] = [(await replica(prefix)).replayTable(), (await replica(prefix)).replayTable()];
    const t = now();
    await a.remember('key-1', 'jti-1', t + 300, t);
    await expect(b.remember('key-1', 'jti-1', t + 300, t)).rejects.toBeInstanceOf(DpopProofError);
    await expect(a.remember('key-1', 'jti-1', t + 300, t)).rejects.toBeInstanceOf(DpopProofError);
    // Another proof of the same key, and the same jti under another key, are new proofs.
    await b.remember('key-1', 'jti-2', t + 300, t);
    await b.remember('key-2', 'jti-1', t + 300, t);
  });

  it('one atomic check: of ten replicas sending the same proof at once, exactly one is accepted', async () => {
    const prefix = freshPrefix();
    const tables = await Promise.all(
      Array.from({ length: 10 }, async () => (await replica(prefix)).replayTable()),
    );
    const t = now();
    const outcomes = await Promise.allSettled(tables.map((table) => table.remember('k', 'same', t + 300, t)));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
  });

  it('remembers a proof under a hashed key until it expires, never the jti as sent', async () => {
    const prefix = freshPrefix();
    const state = await replica(prefix);
    const t = now();
    await state.replayTable().remember('key-1', 'a jti\nwith: odd bytes', t + 60, t);
    const keys = await state.redis.keys(`${prefix}dpop:jti:*`);
    expect(keys).toHaveLength(1);
    expect(keys[0]).toMatch(new RegExp(`^${prefix}dpop:jti:[\\w-]{43}$`));
    const ttl = await state.redis.pttl(keys[0]!);
    expect(ttl).toBeGreaterThan(50_000);
    expect(ttl).toBeLessThanOrEqual(60_000);
  });

  it("bounds one key's proofs across replicas (429 with Retry-After) without touching other keys", async () => {
    const prefix = freshPrefix();
    const [a, b] = [(await replica(prefix)).replayTable(3, 300), (await replica(prefix)).replayTable(3, 300)];
    const t = now();
    await a.remember('greedy', 'p1', t + 300, t);
    await b.remember('greedy', 'p2', t + 300, t);
    await a.remember('greedy', 'p3', t + 300, t);
    const refused = b.remember('greedy', 'p4', t + 300, t);
    await expect(refused).rejects.toBeInstanceOf(DpopTooManyProofsError);
    const error = (await refused.catch((e: unknown) => e)) as DpopTooManyProofsError;
    expect(error.retryAfterSeconds).toBeGreaterThan(0);
    expect(error.retryAfterSeconds).toBeLessThanOrEqual(300);
    await b.remember('modest', 'p1', t + 300, t);
  });

  it('fails closed while Redis is away, logged once, and checks again once it is back', async () => {
    const logs = captureLogs();
    const state = await replica(freshPrefix(), logs.logger);
    const table = state.replayTable();
    const t = now();
    await table.remember('k', 'before', t + 300, t);
    await redis.kill();
    for (const jti of ['during-1', 'during-2', 'during-3', 'before']) {
      const refused = table.remember('k', jti, t + 300, t);
      await expect(refused).rejects.toBeInstanceOf(DpopReplayCheckUnavailableError);
      expect(((await refused.catch((e: unknown) => e)) as { status: number }).status).toBe(503);
    }
    expect(await state.ping()).toBe(false);
    const outage = (line: { component?: unknown; level: string }) =>
      line.component === 'redis' && line.level === 'warn';
    expect(logs.lines.filter(outage)).toHaveLength(1);
    expect(logs.text()).not.toContain(redis.url);

    await redis.restart();
    await vi.waitFor(async () => expect(await state.ping()).toBe(true), { timeout: 10_000, interval: 50 });
    await table.remember('k', 'after', t + 300, t);
    await expect(table.remember('k', 'after', t + 300, t)).rejects.toBeInstanceOf(DpopProofError);
    expect(logs.lines.filter(outage)).toHaveLength(1);
    expect(logs.lines.filter((l) => l.component === 'redis' && l.level === 'info')).toHaveLength(1);
  });
});

describe('the shared rate-limit buckets', () => {
  it('hold the global rate across replicas', async () => {
    const prefix = freshPrefix();
    const [a, b, c] = [
      (await replica(prefix)).rateLimiter(10, undefined),
      (await replica(prefix)).rateLimiter(10, undefined),
      (await replica(prefix)).rateLimiter(10, undefined),
    ];
    const grants = [await a.grant('x', 6), await b.grant('y', 6), await c.grant('z', 6)];
    // A bucket refills at 10 a second: within these few milliseconds, at most one more item.
    const granted = grants.reduce((sum, g) => sum + g.granted, 0);
    expect(granted).toBeGreaterThanOrEqual(10);
    expect(granted).toBeLessThanOrEqual(11);
    expect(grants[2]).toMatchObject({ retryAfter: 1 });
  });

  it('hold each source to its rate across replicas, and sources apart', async () => {
    const prefix = freshPrefix();
    const [a, b] = [
      (await replica(prefix)).rateLimiter(1000, 5),
      (await replica(prefix)).rateLimiter(1000, 5),
    ];
    expect(await a.grant('10.0.0.1', 5)).toEqual({ granted: 5, retryAfter: 0 });
    expect((await b.grant('10.0.0.1', 5)).granted).toBeLessThanOrEqual(1);
    expect(await b.grant('10.0.0.2', 5)).toEqual({ granted: 5, retryAfter: 0 });
  });

  it('hold a byte budget with its burst across replicas, apart from the item buckets', async () => {
    const prefix = freshPrefix();
    // 100 bytes a second with a burst of 1,000, as the collector's byte budget (60 KiB/s, 1 MiB).
    const [a, b] = [
      (await replica(prefix)).rateLimiter(undefined, 100, 1000, 'bytes'),
      (await replica(prefix)).rateLimiter(undefined, 100, 1000, 'bytes'),
    ];
    expect(await a.grant('10.0.0.1', 700)).toEqual({ granted: 700, retryAfter: 0 });
    const second = await b.grant('10.0.0.1', 700);
    // The burst is shared: 300 left (plus a few from the refill), and the rest in seconds at 100/s.
    expect(second.granted).toBeGreaterThanOrEqual(300);
    expect(second.granted).toBeLessThanOrEqual(310);
    expect(second.retryAfter).toBeGreaterThanOrEqual(3);
    // The items' buckets of the same source are untouched.
    expect(await (await replica(prefix)).rateLimiter(undefined, 5).grant('10.0.0.1', 5)).toEqual({
      granted: 5,
      retryAfter: 0,
    });
  });

  it('fall back to this process’s buckets while Redis is away, logged once', async () => {
    const logs = captureLogs();
    const state = await replica(freshPrefix(), logs.logger);
    const limiter = state.rateLimiter(10, undefined);
    await redis.kill();
    try {
      expect(await limiter.grant('x', 4)).toEqual({ granted: 4, retryAfter: 0 });
      expect(await limiter.grant('x', 10)).toMatchObject({ granted: 6 });
      expect(logs.lines.filter((line) => line.component === 'redis' && line.level === 'warn')).toHaveLength(
        1,
      );
    } finally {
      await redis.restart();
    }
  });
});

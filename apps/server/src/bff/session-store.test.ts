import { mkdtemp, readdir, readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startRedisServer } from '../test-support/redis-server.js';
import { FileBackend, newId, RedisBackend, SessionStore, type StoreBackend } from './session-store.js';

const TOKEN = 'refresh-token-that-must-not-be-readable';

/** The same behaviour from both backends: each test gets two stores over one backing (two replicas). */
type Replicas = [StoreBackend, StoreBackend, () => Promise<string>];
function behaves(name: string, replicas: () => Replicas | Promise<Replicas>) {
  describe(name, () => {
    it('keeps a record sealed under a hash: the backing holds neither the id nor the token', async () => {
      const [backend, , dump] = await replicas();
      const store = new SessionStore(backend);
      const id = newId();
      await store.put('session', id, { refreshToken: TOKEN }, 60_000);
      expect(await store.get('session', id)).toEqual({ refreshToken: TOKEN });
      const raw = await dump();
      expect(raw).not.toContain(TOKEN);
      expect(raw).not.toContain(id);
      // Another id (a guessed or another browser's cookie) reads nothing.
      expect(await store.get('session', newId())).toBeUndefined();
    });

    it('serves a session from every replica, and ends it on all when one ends it by its sid', async () => {
      const [a, b] = await replicas();
      const [first, second] = [new SessionStore(a), new SessionStore(b)];
      const alice = newId();
      const bob = newId();
      await first.put('session', alice, { sub: 'alice' }, 60_000, { sid: 'idp\nS1', sub: 'idp\nalice' });
      await first.put('session', bob, { sub: 'bob' }, 60_000, { sid: 'idp\nS2', sub: 'idp\nbob' });
      expect(await second.get('session', alice)).toEqual({ sub: 'alice' });
      expect(await second.deleteIndexed('sid', 'idp\nS1')).toBe(1);
      expect(await first.get('session', alice)).toBeUndefined();
      expect(await first.get('session', bob)).toEqual({ sub: 'bob' });
      expect(await first.deleteIndexed('sub', 'idp\nbob')).toBe(1);
      expect(await second.get('session', bob)).toBeUndefined();
    });

    it('hands a sign-in under way out once', async () => {
      const [a, b] = await replicas();
      const id = newId();
      await new SessionStore(a).put('login', id, { verifier: 'v' }, 60_000);
      const takes = await Promise.all([
        new SessionStore(a).take('login', id),
        new SessionStore(b).take('login', id),
      ]);
      expect(takes.filter(Boolean)).toEqual([{ verifier: 'v' }]);
    });

    it('forgets a record when its time is up', async () => {
      const [a] = await replicas();
      const store = new SessionStore(a);
      const id = newId();
      await store.put('session', id, { sub: 'alice' }, 50);
      await new Promise((resolve) => setTimeout(resolve, 120));
      expect(await store.get('session', id)).toBeUndefined();
    });
  });
}

describe('the BFF session store', () => {
  behaves('in files (one replica without Redis)', async () => {
    const folder = await mkdtemp(join(tmpdir(), 'bff-sessions-'));
    const backend = new FileBackend(folder);
    const dump = async () => {
      const names = await readdir(folder);
      return (
        (await Promise.all(names.map((name) => readFile(join(folder, name), 'utf8')))).join('\n') +
        names.join('\n')
      );
    };
    return [backend, backend, dump];
  });

  let redis: Awaited<ReturnType<typeof startRedisServer>>;
  const clients: Redis[] = [];
  beforeAll(async () => {
    redis = await startRedisServer();
  });
  afterAll(async () => {
    for (const client of clients) client.disconnect();
    await redis.close();
  });
  const connect = () => {
    const client = new Redis(redis.url);
    clients.push(client);
    return client;
  };

  behaves('in Redis (every replica)', () => {
    const prefix = `test-${newId().slice(0, 6)}:`;
    const dump = async () => {
      const client = connect();
      const keys = await client.keys(`${prefix}*`);
      const values = await Promise.all(
        keys.map(async (key) =>
          (await client.type(key)) === 'string' ? client.get(key) : (await client.smembers(key)).join(','),
        ),
      );
      return [...keys, ...values].join('\n');
    };
    return [new RedisBackend(connect(), prefix), new RedisBackend(connect(), prefix), dump];
  });

  it('lets one replica at a time renew a session, however many ask at once', async () => {
    const prefix = `lock-${newId().slice(0, 6)}:`;
    const stores = [0, 1, 2].map(() => new SessionStore(new RedisBackend(connect(), prefix)));
    const id = newId();
    let inside = 0;
    let most = 0;
    await Promise.all(
      stores.flatMap((store) =>
        [0, 1].map(() =>
          store.exclusive(id, async () => {
            inside += 1;
            most = Math.max(most, inside);
            await new Promise((resolve) => setTimeout(resolve, 30));
            inside -= 1;
          }),
        ),
      ),
    );
    expect(most).toBe(1);
  });

  it('keeps a session through a replica’s restart (a new process reads what the old one wrote)', async () => {
    const prefix = `restart-${newId().slice(0, 6)}:`;
    const before = connect();
    const id = newId();
    await new SessionStore(new RedisBackend(before, prefix)).put('session', id, { sub: 'alice' }, 60_000);
    before.disconnect();
    expect(await new SessionStore(new RedisBackend(connect(), prefix)).get('session', id)).toEqual({
      sub: 'alice',
    });
  });
});

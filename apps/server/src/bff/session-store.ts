import { createCipheriv, createDecipheriv, createHash, hkdfSync, randomBytes } from 'node:crypto';
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

/**
 * Where the BFF keeps its sessions and its sign-ins under way (docs/decisions/0119): Redis when replicas
 * share one, else files in the data folder. Either way a record is stored
 *
 * - under a hash of the id the browser holds (the cookie's value), never the id itself, and
 * - sealed (AES-256-GCM) with a key derived from that id (HKDF-SHA-256),
 *
 * so whoever reads the store (a Redis dump, a backup of the data folder) can neither use a session nor
 * read its tokens: that takes the cookie. Records are found without the cookie only to end them (a
 * back-channel logout names the provider's session, `sid`, or the user, `sub`), through indexes that
 * hold hashes too.
 */

/** What the store keeps: sessions, and the sign-ins under way (PKCE verifier, nonce) until the callback. */
export type RecordKind = 'session' | 'login';

/** Index names: the provider's session id and the user's subject, each with the issuer. */
export type IndexName = 'sid' | 'sub';

export interface StoreBackend {
  /** The sealed record, or undefined when there is none (or it expired). */
  get(key: string): Promise<string | undefined>;
  /** Gets and deletes at once: a sign-in under way is redeemed once. */
  take(key: string): Promise<string | undefined>;
  set(key: string, sealed: string, ttlMs: number, indexes: string[]): Promise<void>;
  delete(key: string): Promise<void>;
  /** Deletes every record listed under `index`; returns how many there were. */
  deleteIndexed(index: string): Promise<number>;
  /** Runs `task` while no other process runs one for `name` (renewal), waiting at most `waitMs` for its turn. */
  exclusive<T>(name: string, task: () => Promise<T>, waitMs: number): Promise<T>;
  close?(): Promise<void>;
}

const hash = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('base64url');

function keyFor(kind: RecordKind, id: string): Buffer {
  return Buffer.from(hkdfSync('sha256', id, 'gatehouse-bff', kind, 32));
}

function seal(kind: RecordKind, id: string, value: unknown): string {
  const iv = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', keyFor(kind, id), iv);
  const body = Buffer.concat([cipher.update(JSON.stringify(value), 'utf8'), cipher.final()]);
  return Buffer.concat([iv, cipher.getAuthTag(), body]).toString('base64url');
}

function unseal<T>(kind: RecordKind, id: string, sealed: string): T | undefined {
  try {
    const bytes = Buffer.from(sealed, 'base64url');
    const decipher = createDecipheriv('aes-256-gcm', keyFor(kind, id), bytes.subarray(0, 12));
    decipher.setAuthTag(bytes.subarray(12, 28));
    const text = Buffer.concat([decipher.update(bytes.subarray(28)), decipher.final()]).toString('utf8');
    return JSON.parse(text) as T;
  } catch {
    // Not sealed with this id's key: not this browser's record.
    return undefined;
  }
}

/** A fresh id for a cookie: 256 random bits. */
export function newId(): string {
  return randomBytes(32).toString('base64url');
}

export class SessionStore {
  constructor(readonly backend: StoreBackend) {}

  async get<T>(kind: RecordKind, id: string): Promise<T | undefined> {
    const sealed = await this.backend.get(hash(kind, id));
    return sealed === undefined ? undefined : unseal<T>(kind, id, sealed);
  }

  async take<T>(kind: RecordKind, id: string): Promise<T | undefined> {
    const sealed = await this.backend.take(hash(kind, id));
    return sealed === undefined ? undefined : unseal<T>(kind, id, sealed);
  }

  put(
    kind: RecordKind,
    id: string,
    value: unknown,
    ttlMs: number,
    indexes: Partial<Record<IndexName, string>> = {},
  ): Promise<void> {
    const names = Object.entries(indexes).map(([name, of]) => indexKey(name as IndexName, of));
    return this.backend.set(hash(kind, id), seal(kind, id, value), Math.max(1, Math.round(ttlMs)), names);
  }

  delete(kind: RecordKind, id: string): Promise<void> {
    return this.backend.delete(hash(kind, id));
  }

  /** Ends every session indexed under `name` = `of` (a back-channel logout); how many there were. */
  deleteIndexed(name: IndexName, of: string): Promise<number> {
    return this.backend.deleteIndexed(indexKey(name, of));
  }

  exclusive<T>(id: string, task: () => Promise<T>, waitMs = 10_000): Promise<T> {
    return this.backend.exclusive(hash('lock', id), task, waitMs);
  }
}

function indexKey(name: IndexName, of: string): string {
  return `${name}-${hash(name, of)}`;
}

/** Thrown when another process held the lock for longer than the wait. */
export class LockTimeoutError extends Error {}

/** One process's turns: a chain of promises per name. */
class LocalTurns {
  readonly #tails = new Map<string, Promise<unknown>>();

  run<T>(name: string, task: () => Promise<T>): Promise<T> {
    const previous = this.#tails.get(name) ?? Promise.resolve();
    const turn = previous.then(task, task);
    const tail = turn.catch(() => undefined);
    this.#tails.set(name, tail);
    void tail.then(() => {
      if (this.#tails.get(name) === tail) this.#tails.delete(name);
    });
    return turn;
  }
}

/** Deletes the lock only if it is still ours (it may have expired and been taken since). */
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

/**
 * Redis, shared by every replica: a session started at one is served by all, survives any one's restart,
 * and a back-channel logout that reaches one ends it everywhere.
 */
export class RedisBackend implements StoreBackend {
  readonly #turns = new LocalTurns();

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
  ) {}

  async get(key: string): Promise<string | undefined> {
    return (await this.redis.get(this.prefix + key)) ?? undefined;
  }

  async take(key: string): Promise<string | undefined> {
    return (await this.redis.getdel(this.prefix + key)) ?? undefined;
  }

  async set(key: string, sealed: string, ttlMs: number, indexes: string[]): Promise<void> {
    const multi = this.redis.multi().set(this.prefix + key, sealed, 'PX', ttlMs);
    for (const index of indexes) {
      multi.sadd(this.prefix + index, key);
      // The index lives as long as its longest record; a member whose record expired is harmless.
      multi.pexpire(this.prefix + index, ttlMs, 'GT');
      multi.pexpire(this.prefix + index, ttlMs, 'NX');
    }
    await multi.exec();
  }

  async delete(key: string): Promise<void> {
    await this.redis.del(this.prefix + key);
  }

  async deleteIndexed(index: string): Promise<number> {
    const keys = await this.redis.smembers(this.prefix + index);
    if (keys.length === 0) return 0;
    const deleted = await this.redis.del(...keys.map((key) => this.prefix + key));
    await this.redis.del(this.prefix + index);
    return deleted;
  }

  exclusive<T>(name: string, task: () => Promise<T>, waitMs: number): Promise<T> {
    // This process's requests take turns first, so only one of them asks Redis.
    return this.#turns.run(name, async () => {
      const lock = this.prefix + name;
      const token = newId();
      const until = Date.now() + waitMs;
      while ((await this.redis.set(lock, token, 'PX', waitMs, 'NX')) !== 'OK') {
        if (Date.now() > until) throw new LockTimeoutError(`another replica holds ${name}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      try {
        return await task();
      } finally {
        await this.redis.eval(RELEASE, 1, lock, token).catch(() => undefined);
      }
    });
  }
}

interface FileRecord {
  expiresAt: number;
  indexes: string[];
  sealed: string;
}

/**
 * Files in the data folder, for one replica without Redis: a record per file (written whole, then
 * renamed into place), swept of expired ones now and then.
 */
export class FileBackend implements StoreBackend {
  readonly #turns = new LocalTurns();
  #ready: Promise<unknown> | undefined;
  #lastSweep = 0;

  constructor(
    private readonly folder: string,
    private readonly now: () => number = Date.now,
  ) {}

  async get(key: string): Promise<string | undefined> {
    const record = await this.#read(key);
    return record && record.expiresAt > this.now() ? record.sealed : undefined;
  }

  take(key: string): Promise<string | undefined> {
    return this.#turns.run(`take:${key}`, async () => {
      const sealed = await this.get(key);
      await this.delete(key);
      return sealed;
    });
  }

  async set(key: string, sealed: string, ttlMs: number, indexes: string[]): Promise<void> {
    await (this.#ready ??= mkdir(this.folder, { recursive: true, mode: 0o700 }));
    const record: FileRecord = { expiresAt: this.now() + ttlMs, indexes, sealed };
    const path = this.#path(key);
    const temporary = `${path}.${newId().slice(0, 8)}.tmp`;
    await writeFile(temporary, JSON.stringify(record), { mode: 0o600 });
    await rename(temporary, path);
    if (this.now() - this.#lastSweep > 10 * 60_000) {
      this.#lastSweep = this.now();
      void this.#sweep(() => false);
    }
  }

  async delete(key: string): Promise<void> {
    await rm(this.#path(key), { force: true });
  }

  deleteIndexed(index: string): Promise<number> {
    return this.#sweep((record) => record.indexes.includes(index));
  }

  exclusive<T>(name: string, task: () => Promise<T>): Promise<T> {
    return this.#turns.run(name, task);
  }

  /** Deletes the expired records and those `also` picks; returns how many `also` picked. */
  async #sweep(also: (record: FileRecord) => boolean): Promise<number> {
    let names: string[];
    try {
      names = await readdir(this.folder);
    } catch {
      return 0;
    }
    let picked = 0;
    for (const name of names) {
      if (!name.endsWith('.json')) continue;
      const key = name.slice(0, -'.json'.length);
      const record = await this.#read(key);
      if (!record) continue;
      const chosen = also(record);
      if (chosen) picked += 1;
      if (chosen || record.expiresAt <= this.now()) await this.delete(key);
    }
    return picked;
  }

  async #read(key: string): Promise<FileRecord | undefined> {
    try {
      return JSON.parse(await readFile(this.#path(key), 'utf8')) as FileRecord;
    } catch {
      return undefined;
    }
  }

  #path(key: string): string {
    // Keys are base64url hashes with a fixed prefix: no separator can reach the path.
    return join(this.folder, `${key}.json`);
  }
}

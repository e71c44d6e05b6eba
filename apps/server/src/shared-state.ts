import { createHash } from 'node:crypto';
import { RateLimits, type Grant, type RateLimiter } from '@gatehouse/collector';
import { Redis } from 'ioredis';
import {
  DpopReplayCheckUnavailableError,
  DpopReplayError,
  DpopTooManyProofsError,
  type ReplayTable,
} from './auth/dpop.js';
import type { Logger } from './log.js';

/**
 * What replicas must agree on, kept in Redis (REDIS_URL; docs/decisions/0061, 0062): the DPoP replay
 * table and the rate-limit buckets. Each decision is one Lua script, so it is atomic whatever the number
 * of replicas, and it reads Redis's clock, so the replicas' clocks do not matter.
 *
 * When Redis cannot be reached: a replay check fails closed (503, the proof is never accepted); a rate
 * limit falls back to this process's buckets. Either is logged once when the outage starts, once when
 * it ends, never per request.
 */

/**
 * KEYS[1]: the proof (its key and jti, hashed); KEYS[2]: how many proofs that key had remembered in the
 * current window. ARGV: the proof's lifetime (ms), the proofs a key may have in a window, the window (ms).
 * Returns {0} remembered, {1} already used, {2, ms until the key's window ends} the key has too many.
 * The key's count is checked first, so that a key over its bound stores nothing more.
 */
const REMEMBER_PROOF = `
local count = tonumber(redis.call('GET', KEYS[2]) or '0')
if count >= tonumber(ARGV[2]) then
  return {2, redis.call('PTTL', KEYS[2])}
end
if not redis.call('SET', KEYS[1], '1', 'NX', 'PX', ARGV[1]) then
  return {1, 0}
end
if redis.call('INCR', KEYS[2]) == 1 then
  redis.call('PEXPIRE', KEYS[2], ARGV[3])
end
return {0, 0}
`;

/**
 * Token buckets as in packages/collector/src/http/rate-limit.ts (never in debt), for every replica at once.
 * KEYS[1]: the global bucket; KEYS[2]: the source's. ARGV: tokens asked (items, or bytes), the global
 * rate, the source's rate (0: no such bucket), the source bucket's size (0: one second's worth). A bucket
 * is a hash {tokens, at} (at: ms, Redis's clock); one unused for size / rate seconds is full again, so it
 * expires then (a missing bucket is a full one). Returns {granted, seconds until the rest could be taken}.
 */
const TAKE_TOKENS = `
local time = redis.call('TIME')
local now = tonumber(time[1]) * 1000 + math.floor(tonumber(time[2]) / 1000)
local asked = tonumber(ARGV[1])
local rates = {tonumber(ARGV[2]), tonumber(ARGV[3])}
local sizes = {rates[1], tonumber(ARGV[4])}
if sizes[2] <= 0 then sizes[2] = rates[2] end
local tokens = {}
local granted = asked
for i = 1, 2 do
  if rates[i] > 0 then
    local state = redis.call('HMGET', KEYS[i], 'tokens', 'at')
    local held = tonumber(state[1]) or sizes[i]
    local at = tonumber(state[2]) or now
    tokens[i] = math.min(sizes[i], held + math.max(0, now - at) / 1000 * rates[i])
    granted = math.min(granted, math.floor(tokens[i]))
  end
end
local rest = asked - granted
local retry = 0
for i = 1, 2 do
  if rates[i] > 0 then
    local left = tokens[i] - granted
    redis.call('HSET', KEYS[i], 'tokens', tostring(left), 'at', tostring(now))
    redis.call('PEXPIRE', KEYS[i], math.ceil(sizes[i] / rates[i] * 1000))
    if rest > 0 then
      retry = math.max(retry, 1, math.ceil((math.min(rest, sizes[i]) - left) / rates[i]))
    end
  end
end
return {granted, retry}
`;

/** A short, fixed-length key part: what clients chose (jti, addresses) never becomes a key as it is. */
const hashed = (...parts: string[]) => createHash('sha256').update(parts.join('\n')).digest('base64url');

export interface SharedStateOptions {
  /** REDIS_URL: redis:// or rediss://, with the password if any (never logged). */
  url: string;
  logger: Logger;
  /** Before every key, so that several deployments can share one Redis. */
  prefix?: string;
  /** A command unanswered by then has failed (a hung Redis must not hang requests). */
  commandTimeoutMs?: number;
}

export class SharedState {
  readonly redis: Redis;
  readonly #prefix: string;
  readonly #logger: Logger;
  readonly #scripts = new Map<string, string>();
  /** Since when Redis is known not to answer; undefined while it does. */
  #outageSince: number | undefined;

  /** Before every key of this deployment's (other parts, such as the BFF's sessions, add theirs after it). */
  get prefix(): string {
    return this.#prefix;
  }

  constructor(options: SharedStateOptions) {
    this.#prefix = options.prefix ?? 'gatehouse:';
    this.#logger = options.logger;
    this.redis = new Redis(options.url, {
      // No queue while disconnected: a command fails at once, so a replay check is refused at once
      // instead of waiting for a Redis that may not come back.
      enableOfflineQueue: false,
      maxRetriesPerRequest: 0,
      commandTimeout: options.commandTimeoutMs ?? 1_000,
      connectTimeout: 2_000,
      // Reconnect for ever, at most every two seconds.
      retryStrategy: (times) => Math.min(times * 100, 2_000),
      lazyConnect: true,
    });
    // Connection errors come as events too; without a listener ioredis prints each one.
    this.redis.on('error', (error: Error) => this.#failed(error));
    this.redis.on('ready', () => this.#answered());
  }

  /** Connects; resolves either way (an unreachable Redis fails readiness and is retried). */
  async connect(): Promise<void> {
    await this.redis.connect().catch((error: unknown) => this.#failed(error));
  }

  /** For readiness: Redis answers a PING now. */
  async ping(): Promise<boolean> {
    return this.#call(() => this.redis.ping()).then(
      (answer) => answer === 'PONG',
      () => false,
    );
  }

  /** Quits cleanly when Redis answers, else drops the connection (the last step of a drain). */
  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  /**
   * The DPoP replay table for every replica: one atomic check per proof. `perKeyLimit` proofs of one key
   * a window at most (429 past it, that key only); `windowSeconds` is a proof's lifetime.
   */
  replayTable(perKeyLimit = 1_000, windowSeconds = 305): ReplayTable {
    return {
      remember: async (jkt, jti, expiresAt, now) => {
        let outcome: [number, number];
        try {
          outcome = (await this.#run(
            REMEMBER_PROOF,
            [`${this.#prefix}dpop:jti:${hashed(jkt, jti)}`, `${this.#prefix}dpop:key:${hashed(jkt)}`],
            [Math.max(1, Math.ceil((expiresAt - now) * 1000)), perKeyLimit, windowSeconds * 1000],
          )) as [number, number];
        } catch (error) {
          throw new DpopReplayCheckUnavailableError(
            'The DPoP replay check cannot be made now (the shared store does not answer); try again shortly',
            { cause: error },
          );
        }
        const [verdict, wait] = outcome;
        if (verdict === 1) throw new DpopReplayError('The DPoP proof was already used (jti)');
        if (verdict === 2) {
          throw new DpopTooManyProofsError(
            'Too many DPoP proofs with this key in the last minutes; wait before the next request',
            Math.max(1, Math.ceil(wait / 1000)),
          );
        }
      },
    };
  }

  /**
   * The collector's buckets for every replica. When Redis cannot be reached, this process's own buckets
   * at the same rates decide (docs/decisions/0062): telemetry goes on, each replica within the rates.
   */
  rateLimiter(
    globalRate: number | undefined,
    perSourceRate: number | undefined,
    /** What a source's bucket holds when full (a burst, as the byte budget's); default one second's worth. */
    perSourceSize?: number,
    /** Keeps these buckets apart from others of the same sources (items, bytes). */
    name = 'rate',
  ): RateLimiter {
    const local = new RateLimits(globalRate, perSourceRate, Date.now, perSourceSize);
    return {
      grant: async (source, count): Promise<Grant> => {
        try {
          const [granted, retryAfter] = (await this.#run(
            TAKE_TOKENS,
            [`${this.#prefix}${name}:global`, `${this.#prefix}${name}:source:${hashed(source)}`],
            [count, globalRate ?? 0, perSourceRate ?? 0, perSourceSize ?? 0],
          )) as [number, number];
          return { granted, retryAfter };
        } catch {
          return local.grant(source, count);
        }
      },
    };
  }

  /** Runs a script by its hash, loading it once when Redis does not know it (a restart forgets them). */
  async #run(script: string, keys: string[], args: Array<string | number>): Promise<unknown> {
    return this.#call(async () => {
      let sha = this.#scripts.get(script);
      if (sha === undefined) {
        sha = createHash('sha1').update(script).digest('hex');
        this.#scripts.set(script, sha);
      }
      try {
        return await this.redis.evalsha(sha, keys.length, ...keys, ...args);
      } catch (error) {
        if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
        return await this.redis.eval(script, keys.length, ...keys, ...args);
      }
    });
  }

  async #call<T>(command: () => Promise<T>): Promise<T> {
    try {
      const result = await command();
      this.#answered();
      return result;
    } catch (error) {
      this.#failed(error);
      throw error;
    }
  }

  #failed(error: unknown): void {
    if (this.#outageSince !== undefined) return;
    this.#outageSince = Date.now();
    this.#logger.warn(
      { component: 'redis', reason: error instanceof Error ? error.message : String(error) },
      'Redis cannot be used: DPoP proofs are refused (503) and rate limits are per process until it answers again',
    );
  }

  #answered(): void {
    if (this.#outageSince === undefined) return;
    const seconds = Math.round((Date.now() - this.#outageSince) / 1000);
    this.#outageSince = undefined;
    this.#logger.info({ component: 'redis', seconds }, `Redis answers again (after ${seconds} s)`);
  }
}

import type { ApiRefusalReason } from '@gatehouse/api-contract';
import { createHash } from 'node:crypto';

/** What the provider said about a token it issued, whichever way it was asked. */
export interface TokenFacts {
  /** Claims: the introspection response (RFC 7662 2.2) or the userinfo response (OpenID Connect Core 5.3.2). */
  claims: Record<string, unknown>;
  /** Seconds since the epoch after which the facts must not be used; the token's `exp` when known. */
  expiresAt: number | undefined;
}

/** The provider said the token is not (or no longer) valid; `reason` as the refusal metric counts it. */
export class TokenRefusedError extends Error {
  override readonly name = 'TokenRefusedError';
  readonly code = 'token_refused';
  readonly reason: ApiRefusalReason;
  constructor(message: string, options?: { cause?: unknown; reason?: ApiRefusalReason }) {
    super(message, options);
    this.reason = options?.reason ?? 'invalid_token';
  }
}

/** The provider could not be asked, or answered something that is not an answer. */
export class TokenCheckUnavailableError extends Error {
  override readonly name = 'TokenCheckUnavailableError';
  readonly code = 'token_check_unavailable';
}

export interface IntrospectionClient {
  client_id: string;
  client_secret: string;
}

const TIMEOUT_MS = 5_000;

/**
 * RFC 7662 section 2.1: asks the provider whether `token` is an active access token, authenticating with
 * HTTP Basic (`client_secret_basic`, RFC 6749 2.3.1: both parts form-urlencoded first).
 */
export async function introspect(
  endpoint: string,
  client: IntrospectionClient,
  token: string,
  fetchImpl: typeof fetch = fetch,
): Promise<TokenFacts> {
  const basic = Buffer.from(
    `${encodeURIComponent(client.client_id)}:${encodeURIComponent(client.client_secret)}`,
  ).toString('base64');
  const response = await ask(endpoint, 'introspection', fetchImpl, {
    method: 'POST',
    headers: {
      authorization: `Basic ${basic}`,
      'content-type': 'application/x-www-form-urlencoded',
      accept: 'application/json',
    },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }).toString(),
  });
  // A refused client is the server's misconfiguration, not the caller's bad token.
  if (!response.ok) {
    throw new TokenCheckUnavailableError(`The provider's introspection endpoint answered ${response.status}`);
  }
  const claims = await jsonObject(response, 'introspection');
  // Section 2.2: `active` is the only required member; anything but `true` means "not a token to accept".
  if (claims.active !== true) throw new TokenRefusedError('The access token is not active');
  // A refresh token is "active" too when a provider ignores the hint (section 2.1 allows that). A
  // DPoP-bound access token says `DPoP` (RFC 9449 6.2).
  const type = typeof claims.token_type === 'string' ? claims.token_type.toLowerCase() : undefined;
  if (type !== undefined && type !== 'bearer' && type !== 'access_token' && type !== 'dpop') {
    throw new TokenRefusedError(`The token is a ${claims.token_type as string} token, not an access token`);
  }
  return { claims, expiresAt: typeof claims.exp === 'number' ? claims.exp : undefined };
}

/**
 * OpenID Connect Core 5.3: asks the userinfo endpoint with the token. An answer proves the provider issued
 * the token and still honours it; 401 (RFC 6750 3.1) means it does not.
 */
export async function askUserinfo(
  endpoint: string,
  token: string,
  fetchImpl: typeof fetch = fetch,
): Promise<TokenFacts> {
  const response = await ask(endpoint, 'userinfo', fetchImpl, {
    headers: { authorization: `Bearer ${token}`, accept: 'application/json' },
  });
  if (response.status === 401 || response.status === 403) {
    throw new TokenRefusedError('The provider does not accept this access token');
  }
  if (!response.ok) {
    throw new TokenCheckUnavailableError(`The provider's userinfo endpoint answered ${response.status}`);
  }
  const type = response.headers.get('content-type') ?? '';
  if (!type.includes('json')) {
    // A signed or encrypted userinfo response (Core 5.3.2) is not supported: the client would need keys.
    throw new TokenCheckUnavailableError(`The provider's userinfo endpoint answered ${type || 'no type'}`);
  }
  return { claims: await jsonObject(response, 'userinfo'), expiresAt: undefined };
}

async function ask(
  endpoint: string,
  what: string,
  fetchImpl: typeof fetch,
  init: RequestInit,
): Promise<Response> {
  try {
    return await fetchImpl(endpoint, { ...init, redirect: 'error', signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (cause) {
    throw new TokenCheckUnavailableError(`The provider's ${what} endpoint could not be reached`, { cause });
  }
}

async function jsonObject(response: Response, what: string): Promise<Record<string, unknown>> {
  const body: unknown = await response.json().catch(() => undefined);
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw new TokenCheckUnavailableError(`The provider's ${what} endpoint answered no JSON object`);
  }
  return body as Record<string, unknown>;
}

export interface TokenFactsCacheOptions {
  /** How long an answer is reused at most, in seconds. */
  ttlSeconds: number;
  /** How many tokens are remembered at most; the oldest entry goes first. */
  maxEntries: number;
  now?: () => number;
}

/**
 * Remembers the provider's answer per token for a short time, so each API call does not cost a round trip.
 * Keyed by a SHA-256 of the token, so a heap dump holds no usable token; an entry never outlives the
 * token's own `exp`. Only positive answers are kept: a refused token is asked about again.
 */
export class TokenFactsCache {
  readonly #entries = new Map<string, { facts: TokenFacts; until: number }>();
  readonly #pending = new Map<string, Promise<TokenFacts>>();
  readonly #now: () => number;

  constructor(private readonly options: TokenFactsCacheOptions) {
    this.#now = options.now ?? (() => Date.now() / 1000);
  }

  /** The remembered answer for `token`, or `load`'s, which is remembered when it succeeds. */
  async get(token: string, load: () => Promise<TokenFacts>): Promise<TokenFacts> {
    const key = createHash('sha256').update(token).digest('base64url');
    const now = this.#now();
    const known = this.#entries.get(key);
    if (known && known.until > now) return known.facts;
    if (known) this.#entries.delete(key);
    // Concurrent calls with the same token (a page firing several requests) share one round trip.
    let pending = this.#pending.get(key);
    if (!pending) {
      pending = load().finally(() => this.#pending.delete(key));
      this.#pending.set(key, pending);
    }
    const facts = await pending;
    const until = Math.min(now + this.options.ttlSeconds, facts.expiresAt ?? Number.POSITIVE_INFINITY);
    if (until > now && !this.#entries.has(key)) {
      if (this.#entries.size >= this.options.maxEntries) {
        const oldest = this.#entries.keys().next();
        if (!oldest.done) this.#entries.delete(oldest.value);
      }
      this.#entries.set(key, { facts, until });
    }
    return facts;
  }

  get size(): number {
    return this.#entries.size;
  }
}

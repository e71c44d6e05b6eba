import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import {
  calculateJwkThumbprint,
  EmbeddedJWK,
  errors,
  jwtVerify,
  type JWK,
  type JWTPayload,
  type JWTHeaderParameters,
} from 'jose';

/**
 * RFC 9449 (DPoP) as a resource server checks it: a proof is a JWT signed with the key the access token
 * is bound to, made for this one request. This module judges one proof against one request and one
 * token; the middleware (bearer.ts) decides when a proof is needed and how to answer.
 */

/** RFC 9449 section 4.3, point 5: asymmetric algorithms only; ES256 is what browsers' WebCrypto keys use. */
export const DPOP_ALGORITHMS = ['ES256', 'ES384', 'PS256', 'RS256', 'EdDSA'] as const;

/** A proof the API refuses: `invalid_dpop_proof` (RFC 9449 section 7.1). */
export class DpopProofError extends Error {
  override readonly name: string = 'DpopProofError';
  readonly code = 'invalid_dpop_proof';
}

/** A proof whose `jti` was seen already (RFC 9449 section 11.1): counted apart, as a replay. */
export class DpopReplayError extends DpopProofError {
  override readonly name = 'DpopReplayError';
}

/** The proof lacks the nonce the API asks for, or carries an old one: `use_dpop_nonce` (section 9). */
export class DpopNonceError extends Error {
  override readonly name = 'DpopNonceError';
  readonly code = 'use_dpop_nonce';
  constructor(
    message: string,
    /** The nonce to put into the next proof, sent back in the `DPoP-Nonce` header. */
    readonly nonce: string,
  ) {
    super(message);
  }
}

/**
 * The replay check cannot be made (the table is full, or Redis does not answer): the proof is refused,
 * never let through unchecked (RFC 9449 section 11.1; docs/decisions/0062).
 */
export class DpopReplayCheckUnavailableError extends Error {
  override readonly name: string = 'DpopReplayCheckUnavailableError';
  readonly code = 'temporarily_unavailable';
  readonly status = 503;
}

/** Too many proofs are being remembered to tell a replay: refuse rather than forget one. */
export class DpopReplayCacheFullError extends DpopReplayCheckUnavailableError {
  override readonly name = 'DpopReplayCacheFullError';
}

/**
 * One key sent more proofs within the window than any client needs: its next proofs are refused until
 * its oldest expire, so that it cannot use up the table the other keys need.
 */
export class DpopTooManyProofsError extends Error {
  override readonly name = 'DpopTooManyProofsError';
  readonly code = 'too_many_requests';
  readonly status = 429;
  constructor(
    message: string,
    /** Whole seconds until this key's oldest remembered proof expires. */
    readonly retryAfterSeconds: number,
  ) {
    super(message);
  }
}

/** What the request shows about itself, as the client saw it (behind a proxy: the public URL). */
export interface DpopRequest {
  /** The `DPoP` header as received; Node joins repeated headers with ", ", which a JWT never contains. */
  proof: string;
  method: string;
  /** The absolute URL the client addressed; query and fragment are ignored (section 4.3, point 9). */
  url: string;
  accessToken: string;
  /** The token's `cnf.jkt` (RFC 9449 section 6): the thumbprint of the key it is bound to. */
  boundKey: string;
}

export interface DpopVerifierOptions {
  /** How far `iat` may lie in the past, in seconds; proofs are remembered this long to refuse replays. */
  maxAgeSeconds?: number;
  /** How far `iat` may lie in the future (clock skew), in seconds. */
  futureSkewSeconds?: number;
  /** Replays are told apart for at most this many proofs at a time (the in-memory table). */
  maxRememberedProofs?: number;
  /** Proofs of one key remembered at most; past it that key is refused (429) until its oldest expire. */
  maxProofsPerKey?: number;
  /** Where accepted proofs are remembered; default a table in this process (one replica). */
  replay?: ReplayTable;
  /** Server-issued nonces (section 9); without them, freshness rests on `iat` and `jti` alone. */
  nonces?: DpopNonces | undefined;
  now?: () => number;
}

export interface DpopVerifier {
  /** Resolves when the proof holds for this request and token; rejects with one of the errors above. */
  (request: DpopRequest): Promise<void>;
}

/**
 * Checks, in the order of RFC 9449 section 4.3 and 7.1: one well-formed JWT with `typ: dpop+jwt`, an
 * asymmetric `alg` and a public `jwk`, signed by that key; `jti`, `htm`, `htu`, `iat` present; `htm` and
 * `htu` name this request; `iat` within the window; the nonce when one is required; `ath` is the hash of
 * the token presented; the key is the one the token is bound to; and `jti` not seen in the window.
 */
export function createDpopVerifier(options: DpopVerifierOptions = {}): DpopVerifier {
  const maxAge = options.maxAgeSeconds ?? 300;
  const skew = options.futureSkewSeconds ?? 5;
  const now = options.now ?? (() => Date.now() / 1000);
  const seen =
    options.replay ??
    new MemoryReplayTable(options.maxRememberedProofs ?? 100_000, options.maxProofsPerKey ?? 1_000);

  return async (request) => {
    if (request.proof.includes(',')) throw new DpopProofError('More than one DPoP proof was sent');
    let payload: JWTPayload;
    let header: JWTHeaderParameters;
    try {
      ({ payload, protectedHeader: header } = await jwtVerify(request.proof, EmbeddedJWK, {
        typ: 'dpop+jwt',
        algorithms: [...DPOP_ALGORITHMS],
      }));
    } catch (error) {
      if (error instanceof errors.JOSEError) {
        throw new DpopProofError(`The DPoP proof is invalid: ${error.message}`, { cause: error });
      }
      throw error;
    }
    const { jti, htm, htu, iat } = payload as Record<string, unknown>;
    if (typeof jti !== 'string' || jti.length === 0 || jti.length > 256) {
      throw new DpopProofError('The DPoP proof has no usable jti');
    }
    if (htm !== request.method) throw new DpopProofError('The DPoP proof is for another HTTP method');
    if (typeof htu !== 'string' || !sameTarget(htu, request.url)) {
      throw new DpopProofError('The DPoP proof is for another URL');
    }
    const time = now();
    if (typeof iat !== 'number' || iat > time + skew || iat < time - maxAge) {
      throw new DpopProofError('The DPoP proof is too old or from the future (iat)');
    }
    if (options.nonces && !options.nonces.accepts(payload.nonce, time)) {
      throw new DpopNonceError(
        payload.nonce === undefined ? 'The API requires a DPoP nonce' : 'The DPoP nonce is stale',
        options.nonces.current(time),
      );
    }
    if (payload.ath !== accessTokenHash(request.accessToken)) {
      throw new DpopProofError('The DPoP proof is for another access token (ath)');
    }
    const thumbprint = await calculateJwkThumbprint(header.jwk as JWK, 'sha256');
    if (thumbprint !== request.boundKey) {
      throw new DpopProofError('The DPoP proof is signed with a key the access token is not bound to');
    }
    // Last, so that only proofs good in every other way take a place in the table.
    await seen.remember(thumbprint, jti, iat + maxAge + skew, time);
  };
}

/** RFC 9449 section 4.2: `ath` is the base64url SHA-256 of the access token's ASCII text. */
export function accessTokenHash(token: string): string {
  return createHash('sha256').update(token, 'ascii').digest('base64url');
}

/**
 * Section 4.3, point 9: `htu` names the request's URI without query and fragment, compared after the
 * syntax-based normalisation of RFC 3986 6.2.2 (case of scheme and host, default port, dot segments,
 * percent-encoding case), which WHATWG URL parsing performs.
 */
export function sameTarget(htu: string, requestUrl: string): boolean {
  const target = (text: string) => {
    const url = new URL(text);
    return `${url.origin}${url.pathname}`;
  };
  try {
    return target(htu) === target(requestUrl);
  } catch {
    return false;
  }
}

/**
 * The proofs accepted within the window, to refuse the same proof twice (section 11.1): in this process,
 * or in Redis for every replica (shared-state.ts). Times are seconds since the epoch.
 */
export interface ReplayTable {
  /**
   * Remembers proof `jti` of key `jkt` until `expiresAt`. Rejects with DpopProofError when it was already
   * used, DpopTooManyProofsError when the key has too many live proofs, and
   * DpopReplayCheckUnavailableError when the check cannot be made.
   */
  remember(jkt: string, jti: string, expiresAt: number, now: number): Promise<void>;
}

/** Seconds between two sweeps of the whole table, at most (a full table is swept at most this often). */
const SWEEP_INTERVAL_SECONDS = 1;

export class MemoryReplayTable implements ReplayTable {
  /** Per key thumbprint, its proofs' expiry by `jti`. */
  private readonly byKey = new Map<string, Map<string, number>>();
  private size = 0;
  private lastSweep = -Infinity;

  constructor(
    private readonly limit: number,
    private readonly perKeyLimit: number,
  ) {}

  remember(jkt: string, jti: string, expiresAt: number, now: number): Promise<void> {
    return new Promise((resolve) => {
      this.add(jkt, jti, expiresAt, now);
      resolve();
    });
  }

  /** Proofs remembered (for tests). */
  get remembered(): number {
    return this.size;
  }

  private add(jkt: string, jti: string, expiresAt: number, now: number): void {
    let proofs = this.byKey.get(jkt);
    if (proofs?.has(jti)) throw new DpopReplayError('The DPoP proof was already used (jti)');
    if (proofs && proofs.size >= this.perKeyLimit) {
      this.sweepKey(jkt, proofs, now);
      if (proofs.size >= this.perKeyLimit) {
        const oldest = Math.min(...proofs.values());
        throw new DpopTooManyProofsError(
          'Too many DPoP proofs with this key in the last minutes; wait before the next request',
          Math.max(1, Math.ceil(oldest - now)),
        );
      }
    }
    if (this.size >= this.limit || now - this.lastSweep >= 60) {
      // Every expired entry goes, wherever it stands: one proof dated ahead must not keep the rest.
      if (now - this.lastSweep >= SWEEP_INTERVAL_SECONDS) this.sweep(now);
      if (this.size >= this.limit) {
        throw new DpopReplayCacheFullError('Too many DPoP proofs in the window; try again shortly');
      }
    }
    // Read again: a sweep above may have dropped the key's emptied map.
    proofs = this.byKey.get(jkt);
    if (!proofs) {
      proofs = new Map();
      this.byKey.set(jkt, proofs);
    }
    proofs.set(jti, expiresAt);
    this.size++;
  }

  private sweepKey(jkt: string, proofs: Map<string, number>, now: number): void {
    for (const [jti, at] of proofs) {
      if (at > now) continue;
      proofs.delete(jti);
      this.size--;
    }
    if (proofs.size === 0) this.byKey.delete(jkt);
  }

  private sweep(now: number): void {
    this.lastSweep = now;
    for (const [jkt, proofs] of this.byKey) this.sweepKey(jkt, proofs, now);
  }
}

/**
 * Nonces without state (section 9): an HMAC of the current time slot. A nonce is good for its slot and
 * the next, so one issued just before a slot ends still works; any instance with the same secret agrees.
 */
export class DpopNonces {
  private readonly secret: Buffer;
  constructor(
    secret: string | undefined,
    private readonly slotSeconds = 60,
  ) {
    this.secret = secret === undefined ? randomBytes(32) : Buffer.from(secret, 'utf8');
  }

  current(now: number): string {
    return this.forSlot(Math.floor(now / this.slotSeconds));
  }

  accepts(nonce: unknown, now: number): boolean {
    if (typeof nonce !== 'string') return false;
    const slot = Math.floor(now / this.slotSeconds);
    const given = Buffer.from(nonce);
    return [slot, slot - 1].some((candidate) => {
      const expected = Buffer.from(this.forSlot(candidate));
      return expected.length === given.length && timingSafeEqual(expected, given);
    });
  }

  private forSlot(slot: number): string {
    return createHmac('sha256', this.secret).update(`dpop-nonce.${slot}`).digest('base64url');
  }
}

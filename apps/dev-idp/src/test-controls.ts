import { AsyncLocalStorage } from 'node:async_hooks';
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

import { issuesSentence } from '@gatehouse/api-contract';
import { SignJWT, decodeJwt, decodeProtectedHeader } from 'jose';
import type { CryptoKey } from 'jose';
import type Koa from 'koa';
import { z } from 'zod';

import { readText } from './body.js';
import { generateSigningKey } from './keys.js';
import type { SigningKey } from './keys.js';

export const TEST_CONTROL_PATH = '/__test/misbehave';
/** The request header that must carry the per-start secret of the test controls. */
export const TEST_CONTROL_SECRET_HEADER = 'X-Test-Controls-Secret';
/**
 * The User-Agent product token that puts a request in a scope of the test controls: a browser whose
 * User-Agent ends in `GatehouseTestScope/<scope>` sees only the settings made for that scope, so tests
 * that share one provider can run side by side. The User-Agent, unlike a header of our own, reaches the
 * provider on every request a browser makes (navigations, CORS fetches) without a preflight.
 */
export const TEST_CONTROL_SCOPE_AGENT = 'GatehouseTestScope';
const SCOPE = /^[\w.-]{1,100}$/;
const SCOPE_IN_AGENT = new RegExp(`\\b${TEST_CONTROL_SCOPE_AGENT}/([\\w.-]{1,100})`);
/** Scopes kept at most: a test that never resets its own must not grow the provider without bound. */
const MAX_SCOPES = 1_000;
/** Sign-ins and tokens whose scope is remembered at most (for requests that cannot name it). */
const MAX_HELD = 10_000;

const digest = (value: string) => createHash('sha256').update(value).digest('base64url');

/** Modes that rewrite the ID token in token endpoint responses. */
const ID_TOKEN_MODES = [
  'wrong-issuer',
  'wrong-audience',
  'wrong-nonce',
  'expired',
  'missing-sub',
  'missing-iat',
  'bad-signature',
  'rotated-key',
  'no-kid',
] as const;

/**
 * Modes that reproduce what independent providers do by default, each a choice the specs allow:
 * - `no-offline-access`: discovery does not list `offline_access`, and a request for it gets invalid_scope
 *   (refresh tokens are still issued without it, as many providers do);
 * - `no-end-session`: discovery names no end-session endpoint;
 * - `logout-needs-state`: end-session ignores post_logout_redirect_uri unless `state` comes with it;
 * - `slow-revocation`: the revocation endpoint answers after SLOW_REVOCATION_MS;
 * - `revocation-refuses-public`: the revocation endpoint wants client authentication (401 invalid_client).
 */
const PROVIDER_DEFAULT_MODES = [
  'no-offline-access',
  'no-end-session',
  'logout-needs-state',
  'slow-revocation',
  'revocation-refuses-public',
] as const;

export const MISBEHAVIOUR_MODES = [
  ...ID_TOKEN_MODES,
  ...PROVIDER_DEFAULT_MODES,
  'userinfo-sub-mismatch',
  'discovery-issuer-mismatch',
  'refresh-fails',
] as const;

/** How long `slow-revocation` takes to answer: longer than any sign-out should wait for it. */
export const SLOW_REVOCATION_MS = 3_000;

type IdTokenMode = (typeof ID_TOKEN_MODES)[number];
export type AuthorizeErrorMode = `authorize-error:${string}`;
export type MisbehaviourMode = (typeof MISBEHAVIOUR_MODES)[number] | AuthorizeErrorMode;

export interface MisbehaviourSettings {
  mode: MisbehaviourMode | null;
  /** TTL of access and ID tokens issued from now on; omitted means the provider's configured TTL. */
  accessTokenTtlSeconds?: number | undefined;
}

const AUTHORIZE_ERROR = /^authorize-error:([a-z_]+)$/;

const SettingsSchema = z.strictObject({
  /** Absent: the settings of requests without a scope (every one, when no test uses scopes). */
  scope: z.string().regex(SCOPE, 'must be 1 to 100 letters, digits, ".", "-" or "_"').optional(),
  mode: z.union([
    z.enum(MISBEHAVIOUR_MODES),
    z
      .string()
      .regex(AUTHORIZE_ERROR, 'must be a known mode or authorize-error:<error_code>')
      .transform((value) => value as AuthorizeErrorMode),
    z.null(),
  ]),
  accessTokenTtlSeconds: z.number().int().min(1).max(86_400).optional(),
});

export interface TestControlsDeps {
  /** Given at start (or generated then): without it the controls answer 403, whoever asks. */
  secret: string;
  signingKey: SigningKey;
  defaultAccessTokenTtlSeconds: number;
  issuer: () => string;
  appOrigin: string;
  clientId: string;
  redirectUri: string;
  routes: {
    authorization: string;
    token: string;
    userinfo: string;
    jwks: string;
    end_session: string;
    revocation: string;
  };
}

function isIdTokenMode(mode: MisbehaviourMode | null): mode is IdTokenMode {
  return (ID_TOKEN_MODES as readonly string[]).includes(mode ?? '');
}

function jsonObject(body: unknown): Record<string, unknown> | undefined {
  return typeof body === 'object' && body !== null && !Array.isArray(body) && !Buffer.isBuffer(body)
    ? (body as Record<string, unknown>)
    : undefined;
}

/**
 * A form body read before the provider: oidc-provider reads an already-consumed body from `req.body`
 * (it warns once that it did), so the text is left there for it.
 */
async function bodyText(ctx: Koa.Context): Promise<string> {
  const req = ctx.req as IncomingMessage & { body?: unknown };
  if (typeof req.body !== 'string') req.body = await readText(req);
  return req.body as string;
}

/** Compares in constant time (through fixed-length digests), so timing tells nothing about the secret. */
export function sameSecret(given: string, secret: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return given.length > 0 && timingSafeEqual(digest(given), digest(secret));
}

/** Replaces a JSON response body but keeps the content type the provider chose (e.g. jwk-set+json). */
function replaceJson(ctx: Koa.Context, body: Record<string, unknown>): void {
  const type = ctx.response.get('Content-Type');
  ctx.body = body;
  if (type) ctx.set('Content-Type', type);
}

/** What one scope has set: its settings, and the key `rotated-key` signs with. */
interface ScopeState {
  settings: MisbehaviourSettings;
  rotated: { key: SigningKey; issued: boolean } | undefined;
}

const BEHAVING: ScopeState = { settings: { mode: null }, rotated: undefined };

/**
 * Makes the provider misbehave on demand so end-to-end tests can prove the SPA's checks. It post-processes real
 * oidc-provider responses (only the part a mode names changes) or, for two modes, answers before the provider.
 */
export class TestControls {
  /** By scope; '' holds the settings of requests that name no scope. Behaving scopes are not kept. */
  readonly #scopes = new Map<string, ScopeState>();
  /** The scope of the request being handled, for what the provider asks outside the middleware (TTLs). */
  readonly #current = new AsyncLocalStorage<ScopeState>();
  /**
   * The scope of what a request may present without naming its scope: a sign-in's PKCE challenge
   * (`pkce:`), an issued token's digest (`token:`).
   */
  readonly #held = new Map<string, string>();
  /** The scope a connection's requests last presented, for its JWKS requests. */
  readonly #bySocket = new WeakMap<object, string>();
  #rogue: Promise<SigningKey> | undefined;

  constructor(private readonly deps: TestControlsDeps) {}

  settings(scope = ''): MisbehaviourSettings {
    return { ...(this.#scopes.get(scope) ?? BEHAVING).settings };
  }

  /** Of the scope of the request being handled (none outside a request). */
  accessTokenTtlSeconds(): number {
    const state = this.#current.getStore() ?? this.#scopes.get('') ?? BEHAVING;
    return state.settings.accessTokenTtlSeconds ?? this.deps.defaultAccessTokenTtlSeconds;
  }

  async set(settings: MisbehaviourSettings, scope = ''): Promise<void> {
    this.#scopes.delete(scope);
    if (settings.mode === null && settings.accessTokenTtlSeconds === undefined) return;
    // A rotated key is made per activation; the JWKS learns it only after a token signed with it went out.
    const rotated =
      settings.mode === 'rotated-key' ? { key: await generateSigningKey(), issued: false } : undefined;
    this.#scopes.set(scope, { settings: { ...settings }, rotated });
    // The oldest first: Map keeps insertion order, and a scope set again was re-inserted above.
    for (const oldest of this.#scopes.keys()) {
      if (this.#scopes.size <= MAX_SCOPES) break;
      this.#scopes.delete(oldest);
    }
  }

  /**
   * The scope a request belongs to. A page's requests name it in their User-Agent; a worker's do not (a
   * browser gives its shared workers its own User-Agent, not the one a test set for its pages), so the
   * token, revocation and UserInfo requests of an app's token vault take the scope of what they present:
   * the code verifier of a sign-in started in a scope, or a token issued in one. The worker's JWKS
   * request, which presents nothing, takes the scope its connection last presented: a browser context
   * (one test's) never shares its connections with another.
   */
  async #scopeNameOf(ctx: Koa.Context): Promise<string> {
    const named = SCOPE_IN_AGENT.exec(ctx.get('User-Agent'))?.[1];
    if (named !== undefined) return named;
    const presented = await this.#presentedScope(ctx);
    if (presented !== undefined) this.#bySocket.set(ctx.req.socket, presented);
    if (presented !== undefined || ctx.path !== this.deps.routes.jwks) return presented ?? '';
    // Only while that scope has settings: else the connection's JWKS requests are the unscoped ones.
    const inherited = this.#bySocket.get(ctx.req.socket);
    return inherited !== undefined && this.#scopes.has(inherited) ? inherited : '';
  }

  async #presentedScope(ctx: Koa.Context): Promise<string | undefined> {
    if (this.#held.size === 0) return undefined;
    const { routes } = this.deps;
    if (ctx.method === 'POST' && (ctx.path === routes.token || ctx.path === routes.revocation)) {
      const form = new URLSearchParams(await bodyText(ctx));
      const verifier = form.get('code_verifier');
      const presented = verifier
        ? `pkce:${digest(verifier)}`
        : `token:${digest(form.get('refresh_token') ?? form.get('token') ?? '')}`;
      return this.#held.get(presented);
    }
    const token = /^(?:Bearer|DPoP) (\S+)$/i.exec(ctx.get('Authorization'))?.[1];
    return token ? this.#held.get(`token:${digest(token)}`) : undefined;
  }

  #hold(key: string, scope: string): void {
    this.#held.delete(key);
    this.#held.set(key, scope);
    for (const oldest of this.#held.keys()) {
      if (this.#held.size <= MAX_HELD) break;
      this.#held.delete(oldest);
    }
  }

  middleware(): Koa.Middleware {
    return async (ctx, next) => {
      if (ctx.path === TEST_CONTROL_PATH) {
        await this.#control(ctx);
        return;
      }
      const scope = await this.#scopeNameOf(ctx);
      const state = this.#scopes.get(scope) ?? BEHAVING;
      await this.#current.run(state, () => this.#handle(ctx, next, state, scope));
    };
  }

  async #handle(ctx: Koa.Context, next: Koa.Next, state: ScopeState, scope: string): Promise<void> {
    const { mode } = state.settings;
    const { routes } = this.deps;
    const challenge = ctx.query.code_challenge;
    if (scope && ctx.path === routes.authorization && typeof challenge === 'string') {
      this.#hold(`pkce:${challenge}`, scope);
    }

    if (mode?.startsWith('authorize-error:') && ctx.method === 'GET' && ctx.path === routes.authorization) {
      if (this.#authorizeError(ctx, mode.slice('authorize-error:'.length))) return;
    }
    if (mode === 'refresh-fails' && ctx.method === 'POST' && ctx.path === routes.token) {
      if (await this.#refreshFails(ctx)) return;
    }
    if (
      mode === 'no-offline-access' &&
      ctx.method === 'GET' &&
      ctx.path === routes.authorization &&
      String(ctx.query.scope ?? '')
        .split(' ')
        .includes('offline_access')
    ) {
      if (this.#authorizeError(ctx, 'invalid_scope')) return;
    }
    if (mode === 'logout-needs-state' && ctx.method === 'GET' && ctx.path === routes.end_session) {
      const params = new URLSearchParams(ctx.querystring);
      if (!params.has('state')) {
        params.delete('post_logout_redirect_uri');
        ctx.querystring = params.toString();
      }
    }
    if (ctx.method === 'POST' && ctx.path === routes.revocation) {
      if (mode === 'slow-revocation') await new Promise((resolve) => setTimeout(resolve, SLOW_REVOCATION_MS));
      if (mode === 'revocation-refuses-public') {
        this.#refuse(ctx, 401, 'invalid_client', 'client authentication required (test control)');
        return;
      }
    }

    await next();

    const body = jsonObject(ctx.body);
    if (ctx.status !== 200 || !body) return;
    if (scope && ctx.path === routes.token) {
      for (const token of [body.access_token, body.refresh_token]) {
        if (typeof token === 'string') this.#hold(`token:${digest(token)}`, scope);
      }
    }
    if (ctx.path === routes.token && isIdTokenMode(mode) && typeof body.id_token === 'string') {
      replaceJson(ctx, { ...body, id_token: await this.#rewriteIdToken(body.id_token, mode, state) });
    } else if (ctx.path === routes.jwks && Array.isArray(body.keys)) {
      const fresh = scope === '' && !this.#bySocket.has(ctx.req.socket);
      const rotated = this.#issuedRotatedKeys(fresh ? [...this.#scopes.values()] : [state]);
      if (rotated.length > 0) replaceJson(ctx, { ...body, keys: [...(body.keys as unknown[]), ...rotated] });
    } else if (ctx.path.startsWith('/.well-known/') && mode === 'discovery-issuer-mismatch') {
      replaceJson(ctx, { ...body, issuer: `${String(body.issuer)}/other` });
    } else if (ctx.path.startsWith('/.well-known/') && mode === 'no-end-session') {
      const { end_session_endpoint: _omitted, ...rest } = body;
      replaceJson(ctx, rest);
    } else if (ctx.path.startsWith('/.well-known/') && mode === 'no-offline-access') {
      const scopes = Array.isArray(body.scopes_supported) ? (body.scopes_supported as unknown[]) : [];
      replaceJson(ctx, { ...body, scopes_supported: scopes.filter((scope) => scope !== 'offline_access') });
    } else if (ctx.path === routes.userinfo && mode === 'userinfo-sub-mismatch') {
      replaceJson(ctx, { ...body, sub: `${String(body.sub)}-other` });
    }
  }

  async #control(ctx: Koa.Context): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    // A custom header and a JSON body: a page on another origin cannot send either without a CORS
    // preflight, which this path never grants; and without the secret nobody gets further.
    if (!sameSecret(ctx.get(TEST_CONTROL_SECRET_HEADER), this.deps.secret)) {
      ctx.status = 403;
      ctx.body = {
        error: 'access_denied',
        error_description: `${TEST_CONTROL_SECRET_HEADER} is missing or wrong`,
      };
      return;
    }
    if (ctx.method === 'POST' && !ctx.is('application/json')) {
      ctx.status = 415;
      ctx.body = { error: 'invalid_request', error_description: 'the body must be application/json' };
      return;
    }
    if (ctx.method === 'GET') {
      const scope = typeof ctx.query.scope === 'string' ? ctx.query.scope : '';
      const settings = this.settings(scope);
      ctx.body = {
        mode: settings.mode,
        accessTokenTtlSeconds: settings.accessTokenTtlSeconds ?? this.deps.defaultAccessTokenTtlSeconds,
      };
      return;
    }
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'GET, POST');
      return;
    }
    let input: unknown;
    try {
      input = JSON.parse(await readText(ctx.req));
    } catch {
      input = undefined;
    }
    const parsed = SettingsSchema.safeParse(input);
    if (!parsed.success) {
      ctx.status = 400;
      ctx.body = {
        error: 'invalid_request',
        error_description: issuesSentence(parsed.error.issues, {
          whole: 'the settings',
          unknownKey: 'a setting of the test controls',
        }),
      };
      return;
    }
    const { scope, ...settings } = parsed.data;
    await this.set(settings, scope);
    ctx.status = 204;
  }

  /** Answers the authorization request with an error at the (registered) redirect_uri, as a real OP would. */
  #authorizeError(ctx: Koa.Context, error: string): boolean {
    const { client_id: clientId, redirect_uri: redirectUri, state } = ctx.query;
    // Never redirect anywhere unregistered: an invalid request goes to the provider, which shows its error page.
    if (clientId !== this.deps.clientId || redirectUri !== this.deps.redirectUri) return false;
    const target = new URL(this.deps.redirectUri);
    target.searchParams.set('error', error);
    target.searchParams.set(
      'error_description',
      `authorization failed (test control authorize-error:${error})`,
    );
    if (typeof state === 'string') target.searchParams.set('state', state);
    target.searchParams.set('iss', this.deps.issuer());
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(target.href);
    return true;
  }

  /** Rejects refresh_token grants; other token requests continue to the provider with the body we had to read. */
  async #refreshFails(ctx: Koa.Context): Promise<boolean> {
    if (new URLSearchParams(await bodyText(ctx)).get('grant_type') !== 'refresh_token') return false;
    this.#refuse(ctx, 400, 'invalid_grant', 'refresh token rejected (test control refresh-fails)');
    return true;
  }

  /** An OAuth error answer the SPA can read (CORS for the app's origin). */
  #refuse(ctx: Koa.Context, status: number, error: string, description: string): void {
    const origin = ctx.get('Origin');
    if (origin === this.deps.appOrigin) {
      // Without this the browser hides the error from the SPA and reports a network failure instead.
      ctx.set('Access-Control-Allow-Origin', origin);
      ctx.vary('Origin');
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.status = status;
    ctx.body = { error, error_description: description };
  }

  /**
   * The rotated keys of `states` that signed a token already: what their JWKS publishes. A JWKS request
   * on a connection that has presented nothing gets every scope's (a vault fetches the keys beside its
   * token request, on a connection of its own, and may fetch them again on it), each a key of its own
   * that no other scope's token names.
   */
  #issuedRotatedKeys(states: ScopeState[]): unknown[] {
    return states.flatMap(({ rotated }) => (rotated?.issued ? [rotated.key.publicJwk] : []));
  }

  async #rewriteIdToken(idToken: string, mode: IdTokenMode, { rotated }: ScopeState): Promise<string> {
    const { kid: _originalKid, ...header } = decodeProtectedHeader(idToken);
    const payload = decodeJwt(idToken);
    let key: CryptoKey = this.deps.signingKey.privateKey;
    let kid: string | undefined = this.deps.signingKey.kid;
    const now = Math.floor(Date.now() / 1000);

    switch (mode) {
      case 'wrong-issuer':
        payload.iss = 'https://wrong-issuer.example';
        break;
      case 'wrong-audience':
        payload.aud = 'someone-else';
        break;
      case 'wrong-nonce':
        payload.nonce = `${typeof payload.nonce === 'string' ? payload.nonce : ''}-tampered`;
        break;
      case 'expired':
        // Well past any clock-skew allowance a client might use.
        payload.iat = now - 2 * 3600;
        payload.exp = now - 3600;
        break;
      case 'missing-sub':
        delete payload.sub;
        break;
      case 'missing-iat':
        delete payload.iat;
        break;
      case 'bad-signature':
        // Same kid as the real key, so a client picks the published key and the signature check fails.
        this.#rogue ??= generateSigningKey(this.deps.signingKey.kid);
        key = (await this.#rogue).privateKey;
        break;
      case 'rotated-key':
        if (rotated) {
          key = rotated.key.privateKey;
          kid = rotated.key.kid;
          rotated.issued = true;
        }
        break;
      case 'no-kid':
        kid = undefined;
        break;
    }

    return new SignJWT(payload)
      .setProtectedHeader({ ...header, alg: 'RS256', ...(kid ? { kid } : {}) })
      .sign(key);
  }
}

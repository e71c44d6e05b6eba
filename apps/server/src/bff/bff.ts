import { errorBody, optionalScopeIn, readRoles, requestedScope } from '@gatehouse/api-contract';
import { parse as parseCookies } from 'cookie';
import express, { type CookieOptions, type NextFunction, type Request, type Response } from 'express';
import { createRemoteJWKSet, errors as joseErrors, jwtVerify } from 'jose';
import * as client from 'openid-client';
import type { Logger } from '../log.js';
import type { OAuthClient } from './oauth-client.js';
import { LockTimeoutError, newId, type SessionStore } from './session-store.js';

/**
 * The backend-for-frontend (RFC 10017 section 6.1; docs/decisions/0119): the server is the OAuth
 * client, and the browser holds a `__Host-` cookie that names a session kept on the server. No token
 * ever reaches the browser. Routes, under /bff:
 *
 * - GET /bff/login: a new authorization request (code, PKCE S256, state, nonce), the browser sent on.
 * - GET /bff/callback: the provider's answer; the code redeemed, the ID token checked, a new session.
 * - GET /bff/user: who is signed in (claims only), for the SPA.
 * - POST /bff/logout: revokes the tokens, ends the session, answers the provider's end-session URL.
 * - POST /bff/backchannel-logout: the provider ends the sessions of one of its sessions (`sid`).
 *
 * And before the API (`apiSession`): a request with the session cookie gets the session's access token,
 * renewed first when it is about to expire.
 */

/** The request header every cookie-authenticated call must carry (RFC 10017 6.1.3.2; Duende BFF's name). */
export const CSRF_HEADER = 'x-csrf';

/** A sign-in under way: what the callback needs to check the answer. */
interface LoginRecord {
  verifier: string;
  nonce: string;
  state: string;
  /** The scope requested, and whether the request was `prompt=none`. */
  scope: string;
  silent: boolean;
}

/** A session: who, and the tokens the server holds for them. */
export interface SessionRecord {
  issuer: string;
  sub: string;
  /** The provider's session id (ID token `sid`), for back-channel logout. */
  sid: string | undefined;
  name: string;
  email: string | null;
  roles: string[];
  idToken: string | undefined;
  accessToken: string;
  /** Epoch ms: when the access token was issued, and when it expires. */
  accessIssuedAt: number;
  accessExpiresAt: number;
  refreshToken: string | undefined;
  /** Epoch ms: sign-in, and the last request. */
  createdAt: number;
  seenAt: number;
}

export interface BffOptions {
  oauth: OAuthClient;
  store: SessionStore;
  /** The provider's issuer, as the ID token names it. */
  issuer: string;
  publicOrigin: string;
  scope: string;
  rolesClaim: string;
  /** More authorization request parameters (OIDC_EXTRA_AUTH_PARAMS: audience=…). */
  extraQueryParams: Record<string, string>;
  idleMs: number;
  maxMs: number;
  logger: Logger;
  now?: () => number;
}

/** A sign-in under way is forgotten after this long. */
const LOGIN_TTL_MS = 10 * 60_000;
/** An access token is renewed when it has less than this left, or less than half its lifetime. */
const RENEW_BEFORE_MS = 60_000;
const dueForRenewal = (session: SessionRecord, now: number) =>
  session.accessExpiresAt - now <
  Math.min(RENEW_BEFORE_MS, (session.accessExpiresAt - session.accessIssuedAt) / 2);
/** A session's idle deadline is moved at most this often (one write per session a minute, not per call). */
const TOUCH_EVERY_MS = 60_000;
const BACKCHANNEL_EVENT = 'http://schemas.openid.net/event/backchannel-logout';

/**
 * The session cookie, and the one that ties a sign-in under way to the browser that started it (login
 * CSRF: its value is part of the sign-in's key). `__Host-` and Secure on https; on a plain-http loopback
 * origin (development, tests; config.ts allows no other) without both, since WebKit keeps no Secure
 * cookie from http://localhost, where no network lies between the browser and the server.
 */
export function bffCookies(publicOrigin: string) {
  const secure = new URL(publicOrigin).protocol === 'https:';
  const prefix = secure ? '__Host-' : '';
  const cookie = (name: string, sameSite: 'strict' | 'lax') => {
    const options = (maxAge: number): CookieOptions => ({
      httpOnly: true,
      secure,
      path: '/',
      sameSite,
      maxAge,
    });
    return {
      name: `${prefix}${name}`,
      of: (req: Request) => cookiesOf(req)[`${prefix}${name}`],
      set: (res: Response, value: string, maxAgeMs: number) =>
        res.cookie(`${prefix}${name}`, value, options(maxAgeMs)),
      clear: (res: Response) => res.clearCookie(`${prefix}${name}`, options(0)),
    };
  };
  return {
    // Strict: the SPA's own calls are same-site even when its document came from another site's link.
    session: cookie('gatehouse-session', 'strict'),
    // Lax: the provider's redirect back is a cross-site top-level navigation, which must carry it.
    login: cookie('gatehouse-login', 'lax'),
  };
}

function cookiesOf(req: Request): Record<string, string | undefined> {
  return parseCookies(req.headers.cookie ?? '');
}

/**
 * RFC 10017 6.1.3.2's defences for a cookie-authenticated request: the custom header (a cross-origin
 * page cannot send it without a CORS preflight this server never grants), and the browser's own word on
 * where the request came from (Origin, Sec-Fetch-Site), when it gives one. The cookie is SameSite=Strict
 * besides. Undefined: allowed; else why not.
 */
export function csrfRefusal(req: Request, publicOrigin: string): string | undefined {
  if (req.get(CSRF_HEADER) !== '1') return `the ${CSRF_HEADER} header is missing`;
  const origin = req.get('origin');
  if (origin !== undefined && origin !== publicOrigin) return `the request came from ${origin}`;
  const site = req.get('sec-fetch-site');
  if (site !== undefined && site !== 'same-origin') return `the request came from a ${site} page`;
  return undefined;
}

/** Where the SPA's callback route takes over, with the OAuth error when there is one. */
function toSpaCallback(res: Response, error?: { code: string; description: string }) {
  const query = error
    ? `?${new URLSearchParams({ error: error.code, error_description: error.description }).toString()}`
    : '';
  res.redirect(303, `/callback${query}`);
}

/** What went wrong with the provider's answer, as a code the SPA knows. */
function callbackError(error: unknown): { code: string; description: string } {
  if (error instanceof client.AuthorizationResponseError) {
    return { code: error.error, description: error.error_description ?? error.message };
  }
  if (error instanceof client.ResponseBodyError) {
    return { code: 'redeem_failed', description: `the provider refused the code: ${error.error}` };
  }
  if (error instanceof client.ClientError) {
    return { code: 'id_token_invalid', description: error.message };
  }
  return { code: 'provider_unreachable', description: 'the identity provider could not be reached' };
}

export class Bff {
  readonly #now: () => number;
  readonly #cookies: ReturnType<typeof bffCookies>;
  /** Optional scopes the provider refused (`invalid_scope`), left out of the next requests. */
  readonly #refusedScopes = new Set<string>();
  #jwks: ReturnType<typeof createRemoteJWKSet> | undefined;

  constructor(private readonly options: BffOptions) {
    this.#now = options.now ?? Date.now;
    this.#cookies = bffCookies(options.publicOrigin);
  }

  router(): express.Router {
    const router = express.Router();
    router.use((_req, res, next) => {
      res.set('Cache-Control', 'no-store');
      next();
    });
    router.get('/login', (req, res) =>
      this.login(req, res).catch((error: unknown) => this.#interrupted(res, error)),
    );
    router.get('/callback', (req, res) =>
      this.callback(req, res).catch((error: unknown) => this.#interrupted(res, error)),
    );
    router.get('/user', this.sameOrigin, (req, res, next) => this.user(req, res).catch(next));
    router.post('/logout', this.sameOrigin, (req, res) =>
      this.logout(req, res).catch((error: unknown) => this.#unavailable(res, error)),
    );
    router.post(
      '/backchannel-logout',
      express.urlencoded({ extended: false, limit: '16kb' }),
      (req, res, next) => this.backchannelLogout(req, res).catch(next),
    );
    return router;
  }

  /** Refuses a cookie-authenticated call that another site could have made (403). */
  readonly sameOrigin = (req: Request, res: Response, next: NextFunction) => {
    const refusal = csrfRefusal(req, this.options.publicOrigin);
    if (refusal === undefined) return next();
    this.options.logger.warn(
      { event: 'bff.csrf_refused', reason: refusal, path: req.path },
      'BFF request refused',
    );
    res.status(403).json(errorBody('forbidden', `Refused: ${refusal}.`));
  };

  /**
   * Before the API: a request with the session cookie is the session's user. It must pass the CSRF
   * checks; it then carries the session's access token (renewed first if due) into the API's own guard,
   * which checks it as it checks any caller's. A request that brings its own Authorization is left as it is.
   */
  readonly apiSession = (req: Request, res: Response, next: NextFunction) => {
    const id = this.#cookies.session.of(req);
    if (id === undefined || req.headers.authorization !== undefined) return next();
    this.sameOrigin(req, res, () => {
      this.#activeSession(id, res)
        .then((session) => {
          if (session) req.headers.authorization = `Bearer ${session.accessToken}`;
          next();
        })
        .catch((error: unknown) => this.#unavailable(res, error));
    });
  };

  private login(req: Request, res: Response) {
    return this.#startLogin(req, res, { silent: req.query.prompt === 'none' });
  }

  /** A new authorization request, and the browser sent to it. */
  async #startLogin(req: Request, res: Response, { silent }: { silent: boolean }) {
    let configuration: client.Configuration;
    try {
      configuration = await this.options.oauth.configuration();
    } catch (error) {
      this.options.logger.warn({ event: 'bff.discovery_failed', err: error }, 'provider discovery failed');
      toSpaCallback(res, {
        code: 'provider_unreachable',
        description: 'the identity provider could not be reached',
      });
      return;
    }
    const binder = this.#cookies.login.of(req) ?? newId();
    const login: LoginRecord = {
      verifier: client.randomPKCECodeVerifier(),
      nonce: client.randomNonce(),
      state: client.randomState(),
      // Less the standard scopes the provider does not list, and those it has refused before.
      scope: requestedScope(
        this.options.scope,
        configuration.serverMetadata().scopes_supported,
        this.#refusedScopes,
      ),
      silent,
    };
    await this.options.store.put('login', `${login.state}.${binder}`, login, LOGIN_TTL_MS);
    const prompt = silent ? { prompt: 'none' } : {};
    const url = client.buildAuthorizationUrl(configuration, {
      ...this.options.extraQueryParams,
      redirect_uri: this.#redirectUri(),
      scope: login.scope,
      code_challenge: await client.calculatePKCECodeChallenge(login.verifier),
      code_challenge_method: 'S256',
      state: login.state,
      nonce: login.nonce,
      ...prompt,
    });
    this.#cookies.login.set(res, binder, LOGIN_TTL_MS);
    res.redirect(302, url.href);
  }

  private async callback(req: Request, res: Response) {
    const params = new URL(req.originalUrl, this.options.publicOrigin).searchParams;
    const state = params.get('state') ?? '';
    const binder = this.#cookies.login.of(req);
    const login =
      state && binder ? await this.options.store.take<LoginRecord>('login', `${state}.${binder}`) : undefined;
    if (!login) {
      toSpaCallback(res, {
        code: 'state_mismatch',
        description: 'no sign-in of this browser waits for this answer',
      });
      return;
    }
    const error = params.get('error');
    const optional = error === 'invalid_scope' ? optionalScopeIn(login.scope) : undefined;
    if (optional !== undefined) {
      // A scope sign-in can do without (offline_access, which Django OAuth Toolkit refuses though it
      // issues refresh tokens): asked again without it, and never again from this process.
      this.#refusedScopes.add(optional);
      this.options.logger.info(
        { event: 'bff.scope_refused', scope: optional },
        'the provider refused a scope',
      );
      await this.#startLogin(req, res, { silent: login.silent });
      return;
    }
    if (error) {
      toSpaCallback(res, { code: error, description: params.get('error_description') ?? error });
      return;
    }
    let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
    let configuration: client.Configuration;
    try {
      configuration = await this.options.oauth.configuration();
      tokens = await client.authorizationCodeGrant(
        configuration,
        new URL(`${this.#redirectUri()}?${params.toString()}`),
        {
          pkceCodeVerifier: login.verifier,
          expectedState: login.state,
          expectedNonce: login.nonce,
          idTokenExpected: true,
        },
      );
    } catch (failure) {
      const reason = callbackError(failure);
      this.options.logger.warn({ event: 'bff.sign_in_failed', reason: reason.code }, 'BFF sign-in failed');
      toSpaCallback(res, reason);
      return;
    }
    const idClaims: client.IDToken | { sub: string; sid?: unknown } = tokens.claims() ?? { sub: '' };
    const claims: Record<string, unknown> = { ...idClaims };
    if (configuration.serverMetadata().userinfo_endpoint) {
      try {
        Object.assign(claims, await client.fetchUserInfo(configuration, tokens.access_token, idClaims.sub), {
          sub: idClaims.sub,
        });
      } catch (failure) {
        this.options.logger.warn(
          { event: 'bff.userinfo_failed', err: failure },
          'UserInfo failed; the ID token’s claims serve',
        );
      }
    }
    const now = this.#now();
    const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
    const session: SessionRecord = {
      issuer: this.options.issuer,
      sub: idClaims.sub,
      sid: text(idClaims.sid),
      name: text(claims.name) ?? text(claims.preferred_username) ?? text(claims.email) ?? idClaims.sub,
      email: text(claims.email) ?? null,
      roles: readRoles(claims, this.options.rolesClaim),
      idToken: tokens.id_token,
      accessToken: tokens.access_token,
      accessIssuedAt: now,
      accessExpiresAt: now + (tokens.expiresIn() ?? 300) * 1000,
      refreshToken: tokens.refresh_token,
      createdAt: now,
      seenAt: now,
    };
    // A new id at every sign-in (no session fixation); the browser's earlier session, if any, ends.
    const earlier = this.#cookies.session.of(req);
    if (earlier) await this.options.store.delete('session', earlier);
    const id = newId();
    await this.#save(id, session);
    this.#cookies.session.set(res, id, this.options.maxMs);
    this.#cookies.login.clear(res);
    this.options.logger.info(
      { event: 'bff.signed_in', hasRefreshToken: session.refreshToken !== undefined },
      'BFF session started',
    );
    toSpaCallback(res);
  }

  private async user(req: Request, res: Response) {
    const id = this.#cookies.session.of(req);
    let session: SessionRecord | undefined;
    try {
      session = id === undefined ? undefined : await this.#activeSession(id, res);
    } catch (error) {
      this.#unavailable(res, error);
      return;
    }
    if (!session) {
      res.json({ user: null });
      return;
    }
    res.json({
      user: {
        issuer: session.issuer,
        sub: session.sub,
        name: session.name,
        email: session.email,
        roles: session.roles,
        expiresAt: Math.floor(this.#endsAt(session) / 1000),
      },
    });
  }

  private async logout(req: Request, res: Response) {
    const id = this.#cookies.session.of(req);
    const session = id === undefined ? undefined : await this.options.store.get<SessionRecord>('session', id);
    if (id !== undefined) await this.options.store.delete('session', id);
    this.#cookies.session.clear(res);
    if (!session) {
      res.json({ endSessionUrl: null });
      return;
    }
    let endSessionUrl: string | null = null;
    try {
      const configuration = await this.options.oauth.configuration();
      await this.#revoke(configuration, session);
      if (configuration.serverMetadata().end_session_endpoint) {
        endSessionUrl = client.buildEndSessionUrl(configuration, {
          ...(session.idToken ? { id_token_hint: session.idToken } : {}),
          post_logout_redirect_uri: `${this.options.publicOrigin}/`,
        }).href;
      }
    } catch (error) {
      this.options.logger.warn(
        { event: 'bff.sign_out_incomplete', err: error },
        'the provider could not be told of a sign-out',
      );
    }
    this.options.logger.info({ event: 'bff.signed_out' }, 'BFF session ended by the user');
    res.json({ endSessionUrl });
  }

  /** OpenID Connect Back-Channel Logout 1.0, 2.5-2.8: a logout token, checked, ends its sessions. */
  private async backchannelLogout(req: Request, res: Response) {
    const token = (req.body as Record<string, unknown> | undefined)?.logout_token;
    if (typeof token !== 'string') {
      res.status(400).json({ error: 'invalid_request', error_description: 'logout_token is missing' });
      return;
    }
    let claims: Record<string, unknown>;
    try {
      claims = await this.#checkLogoutToken(token);
    } catch (error) {
      const description = error instanceof Error ? error.message : String(error);
      this.options.logger.warn(
        { event: 'bff.backchannel_refused', reason: description },
        'logout token refused',
      );
      res.status(400).json({ error: 'invalid_request', error_description: description });
      return;
    }
    const { sid, sub } = claims;
    const ended =
      typeof sid === 'string'
        ? await this.options.store.deleteIndexed('sid', `${this.options.issuer}\n${sid}`)
        : await this.options.store.deleteIndexed('sub', `${this.options.issuer}\n${String(sub)}`);
    this.options.logger.info(
      { event: 'bff.backchannel_logout', sessionsEnded: ended },
      'provider ended sessions',
    );
    res.status(200).end();
  }

  async #checkLogoutToken(token: string): Promise<Record<string, unknown>> {
    const configuration = await this.options.oauth.configuration();
    const metadata = configuration.serverMetadata();
    if (!metadata.jwks_uri) throw new Error('the provider publishes no keys');
    this.#jwks ??= createRemoteJWKSet(new URL(metadata.jwks_uri));
    let payload: Record<string, unknown>;
    try {
      ({ payload } = await jwtVerify(token, this.#jwks, {
        issuer: this.options.issuer,
        audience: configuration.clientMetadata().client_id,
        requiredClaims: ['iat', 'jti', 'events'],
        maxTokenAge: '10m',
        clockTolerance: 60,
        algorithms: [
          'RS256',
          'RS384',
          'RS512',
          'PS256',
          'PS384',
          'PS512',
          'ES256',
          'ES384',
          'ES512',
          'EdDSA',
        ],
      }));
    } catch (error) {
      if (error instanceof joseErrors.JOSEError)
        throw new Error(`the logout token does not hold: ${error.message}`, { cause: error });
      throw error;
    }
    const events = payload.events as Record<string, unknown> | undefined;
    if (typeof events?.[BACKCHANNEL_EVENT] !== 'object')
      throw new Error('the logout token has no logout event');
    if ('nonce' in payload) throw new Error('a logout token has no nonce');
    if (typeof payload.sid !== 'string' && typeof payload.sub !== 'string') {
      throw new Error('the logout token names neither a sid nor a sub');
    }
    return payload;
  }

  /** The session this cookie names, live and with an access token good for the next minute; else none. */
  async #activeSession(id: string, res: Response): Promise<SessionRecord | undefined> {
    let session = await this.options.store.get<SessionRecord>('session', id);
    const now = this.#now();
    if (session && this.#endsAt(session) <= now) {
      await this.options.store.delete('session', id);
      session = undefined;
    }
    if (!session) {
      this.#cookies.session.clear(res);
      return undefined;
    }
    if (dueForRenewal(session, now)) {
      session = await this.#renew(id);
      if (!session) this.#cookies.session.clear(res);
      return session;
    }
    if (now - session.seenAt > TOUCH_EVERY_MS) await this.#save(id, { ...session, seenAt: now });
    return session;
  }

  /**
   * One renewal for a session however many replicas and requests want one (the store's lock): the
   * others wait and read what it wrote. A refused refresh token ends the session; an unreachable
   * provider leaves it as it is (the call is answered 503).
   */
  #renew(id: string): Promise<SessionRecord | undefined> {
    return this.options.store.exclusive(id, async () => {
      const session = await this.options.store.get<SessionRecord>('session', id);
      const now = this.#now();
      if (!session) return undefined;
      if (!dueForRenewal(session, now)) return session;
      if (!session.refreshToken) {
        if (session.accessExpiresAt > now) return session;
        await this.options.store.delete('session', id);
        this.options.logger.info({ event: 'bff.session_expired' }, 'BFF session ended: no refresh token');
        return undefined;
      }
      const configuration = await this.options.oauth.configuration();
      let tokens: Awaited<ReturnType<typeof client.refreshTokenGrant>>;
      try {
        tokens = await client.refreshTokenGrant(configuration, session.refreshToken);
      } catch (error) {
        if (error instanceof client.ResponseBodyError) {
          await this.options.store.delete('session', id);
          this.options.logger.info(
            { event: 'bff.renewal_refused', reason: error.error },
            'BFF session ended: renewal refused',
          );
          return undefined;
        }
        throw error;
      }
      const renewed: SessionRecord = {
        ...session,
        accessToken: tokens.access_token,
        accessIssuedAt: now,
        accessExpiresAt: now + (tokens.expiresIn() ?? 300) * 1000,
        refreshToken: tokens.refresh_token ?? session.refreshToken,
        idToken: tokens.id_token ?? session.idToken,
        seenAt: now,
      };
      await this.#save(id, renewed);
      this.options.logger.info({ event: 'bff.renewed' }, 'BFF session renewed');
      return renewed;
    });
  }

  async #revoke(configuration: client.Configuration, session: SessionRecord) {
    if (!configuration.serverMetadata().revocation_endpoint) return;
    const tokens: [string | undefined, string][] = [
      [session.refreshToken, 'refresh_token'],
      [session.accessToken, 'access_token'],
    ];
    await Promise.all(
      tokens.map(async ([token, hint]) =>
        token === undefined
          ? undefined
          : client
              .tokenRevocation(configuration, token, { token_type_hint: hint })
              .catch((error: unknown) => {
                this.options.logger.warn(
                  { event: 'bff.revocation_failed', hint, err: error },
                  'a token could not be revoked',
                );
              }),
      ),
    );
  }

  #save(id: string, session: SessionRecord): Promise<void> {
    return this.options.store.put('session', id, session, this.#endsAt(session) - this.#now(), {
      ...(session.sid ? { sid: `${session.issuer}\n${session.sid}` } : {}),
      sub: `${session.issuer}\n${session.sub}`,
    });
  }

  /** Idle or absolute, whichever comes first (OWASP Session Management: both timeouts). */
  #endsAt(session: SessionRecord): number {
    return Math.min(session.createdAt + this.options.maxMs, session.seenAt + this.options.idleMs);
  }

  #redirectUri(): string {
    return `${this.options.publicOrigin}/bff/callback`;
  }

  /**
   * A sign-in's navigation that the store could not serve (Redis away): back to the SPA, which says to
   * try again, rather than an error page.
   */
  #interrupted(res: Response, error: unknown) {
    this.options.logger.warn({ event: 'bff.sign_in_interrupted', err: error }, 'a BFF sign-in step failed');
    toSpaCallback(res, {
      code: 'temporarily_unavailable',
      description: 'signing in is not possible at the moment; try again shortly',
    });
  }

  #unavailable(res: Response, error: unknown) {
    const lock = error instanceof LockTimeoutError;
    this.options.logger.warn(
      { event: 'bff.session_unavailable', err: error },
      'a BFF session could not be read or renewed',
    );
    res
      .status(503)
      .set('Retry-After', '2')
      .json(
        errorBody(
          lock ? 'temporarily_unavailable' : 'provider_unavailable',
          lock
            ? 'The session is being renewed; try again shortly.'
            : 'The session could not be read or renewed now; try again shortly.',
        ),
      );
  }
}

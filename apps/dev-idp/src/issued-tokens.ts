import type Koa from 'koa';

import { TEST_CONTROL_SECRET_HEADER, sameSecret } from './test-controls.js';

/** Where a test reads the tokens this provider issued (with the test controls' secret). */
export const ISSUED_TOKENS_PATH = '/__test/issued-tokens';
/** The most recent token responses kept: enough for any one test, bounded for a long run. */
const KEPT = 500;

/** One answer of the token endpoint, with the provider session and account it was for. */
export interface IssuedGrant {
  sessionUid: string | undefined;
  sub: string | undefined;
  access_token: string | undefined;
  refresh_token: string | undefined;
  id_token: string | undefined;
  token_type: string | undefined;
  /** Epoch seconds. */
  expires_at: number | undefined;
  /** Which of these tokens a revocation request named since (`refresh_token`, `access_token`), in order. */
  revoked: string[];
}

interface TokenEntity {
  sessionUid?: string;
  accountId?: string;
}

/**
 * The tokens the token endpoint handed out, for tests that prove where a token must never appear (a
 * page's storage, a script's reach) or that need one to call the API as an attacker would: the app
 * itself never shows them. A test names its browser's provider session (the `_session` cookie), so tests
 * running side by side never read each other's. Only with the test controls on, behind their secret.
 */
export class IssuedTokens {
  readonly #issued: IssuedGrant[] = [];

  constructor(
    private readonly secret: string,
    private readonly routes: { token: string; revocation: string },
    /** The session's uid for a session cookie's value (oidc-provider's Session.find). */
    private readonly sessionUidOf: (cookie: string) => Promise<string | undefined>,
  ) {}

  middleware(): Koa.Middleware {
    return async (ctx, next) => {
      if (ctx.path === ISSUED_TOKENS_PATH) {
        await this.#answer(ctx);
        return;
      }
      await next();
      if (ctx.path === this.routes.revocation && ctx.status === 200) this.#revoked(ctx);
      if (ctx.path !== this.routes.token || ctx.status !== 200) return;
      const body = ctx.body as Record<string, unknown> | undefined;
      const entities = (ctx.oidc as { entities?: Record<string, TokenEntity | undefined> } | undefined)
        ?.entities;
      const entity = entities?.AuthorizationCode ?? entities?.RefreshToken;
      const text = (name: string) => (typeof body?.[name] === 'string' ? body[name] : undefined);
      const expiresIn = body?.expires_in;
      this.#issued.push({
        sessionUid: entity?.sessionUid,
        sub: entity?.accountId,
        access_token: text('access_token'),
        refresh_token: text('refresh_token'),
        id_token: text('id_token'),
        token_type: text('token_type'),
        expires_at: typeof expiresIn === 'number' ? Math.floor(Date.now() / 1000) + expiresIn : undefined,
        revoked: [],
      });
      this.#issued.splice(0, Math.max(0, this.#issued.length - KEPT));
    };
  }

  /** Marks the token a revocation request named (oidc-provider parsed it), on the grant that issued it. */
  #revoked(ctx: Koa.Context): void {
    const token = (ctx.oidc as { params?: { token?: unknown } } | undefined)?.params?.token;
    if (typeof token !== 'string') return;
    for (const grant of this.#issued) {
      if (grant.refresh_token === token) grant.revoked.push('refresh_token');
      if (grant.access_token === token) grant.revoked.push('access_token');
    }
  }

  /**
   * `?session=<the _session cookie's value>`, or `?uid=<a session's uid>` (a session that has ended, whose
   * cookie is gone): that session's grants, oldest first; none: every grant. */
  async #answer(ctx: Koa.Context): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    if (ctx.method !== 'GET' || !sameSecret(ctx.get(TEST_CONTROL_SECRET_HEADER), this.secret)) {
      ctx.status = 403;
      ctx.body = {
        error: 'access_denied',
        error_description: `${TEST_CONTROL_SECRET_HEADER} is missing or wrong`,
      };
      return;
    }
    const cookie = typeof ctx.query.session === 'string' ? ctx.query.session : undefined;
    const named = typeof ctx.query.uid === 'string' ? ctx.query.uid : undefined;
    const uid = named ?? (cookie === undefined ? undefined : await this.sessionUidOf(cookie));
    const filtered = cookie !== undefined || named !== undefined;
    ctx.body = {
      grants: filtered ? this.#issued.filter((grant) => uid && grant.sessionUid === uid) : this.#issued,
    };
  }
}

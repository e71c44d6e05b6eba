import { jwtVerify } from 'jose';
import type { CryptoKey } from 'jose';
import type Koa from 'koa';
import type Provider from 'oidc-provider';
import type { AccessToken, ClientCredentials } from 'oidc-provider';

/**
 * Lets the one access token the SPA holds (a JWT for the Gatehouse API) also work at the userinfo endpoint.
 *
 * oidc-provider refuses that on its own, for two reasons: JWT access tokens are not stored, so its userinfo
 * endpoint cannot find them ("invalid token provided"), and it rejects any access token with an audience
 * ("token audience prevents accessing the userinfo endpoint"). So whenever it issues a JWT access token we also
 * store an opaque "twin" for the same grant, scope, session and lifetime, and when a verified JWT from us arrives
 * at /me we hand the provider that twin instead. Everything else (CORS, scope filtering, grant and session checks,
 * revocation at logout) stays oidc-provider's own.
 */
export class UserinfoBridge {
  readonly #twins = new Map<string, { value: string; exp: number }>();

  constructor(
    private readonly provider: () => Provider,
    private readonly verification: { publicKey: CryptoKey; audience: string },
  ) {}

  /** For `formats.customizers.jwt`: runs while oidc-provider formats a JWT access token. */
  async rememberTwin(token: AccessToken | ClientCredentials): Promise<void> {
    if (token.kind !== 'AccessToken' || !token.client) return;
    const provider = this.provider();
    const twin = new provider.AccessToken({
      accountId: token.accountId,
      client: token.client,
      grantId: token.grantId,
      gty: token.gty,
      scope: token.scope,
      sid: token.sid,
      sessionUid: token.sessionUid,
      expiresWithSession: token.expiresWithSession,
      expiresIn: token.expiration,
    });
    const value = await twin.save();
    const now = Math.floor(Date.now() / 1000);
    for (const [key, entry] of this.#twins) if (entry.exp <= now) this.#twins.delete(key);
    this.#twins.set(token.jti, { value, exp: now + token.expiration });
  }

  /** Koa middleware for the userinfo route: swaps a verified JWT access token for its twin. */
  middleware(userinfoPath: string): Koa.Middleware {
    return async (ctx, next) => {
      const match = /^Bearer ([\w-]+\.[\w-]+\.[\w-]+)$/.exec(ctx.get('Authorization'));
      if (ctx.path === userinfoPath && match?.[1]) {
        const twin = await this.#twinFor(match[1]);
        // Unknown or invalid JWTs go through untouched, so the provider answers them with invalid_token.
        if (twin) ctx.req.headers.authorization = `Bearer ${twin}`;
      }
      await next();
    };
  }

  async #twinFor(jwt: string): Promise<string | undefined> {
    try {
      const { payload } = await jwtVerify(jwt, this.verification.publicKey, {
        issuer: this.provider().issuer,
        audience: this.verification.audience,
        typ: 'at+jwt',
      });
      return payload.jti ? this.#twins.get(payload.jti)?.value : undefined;
    } catch {
      return undefined;
    }
  }
}

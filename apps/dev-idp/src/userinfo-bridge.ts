import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK, type JWTPayload } from 'jose';
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
 *
 * A DPoP-bound JWT (RFC 9449) comes with the DPoP scheme and a proof, which oidc-provider would check
 * against the twin and refuse (its `ath` is the JWT's hash): here the proof is checked against the JWT
 * (signature by its embedded key, `htm`, `htu`, `iat`, `ath`, the key's thumbprint against `cnf.jkt`) and
 * the provider then sees the twin as a bearer token. A development shim: `jti` replays are not tracked.
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
      const match = /^(Bearer|DPoP) ([\w-]+\.[\w-]+\.[\w-]+)$/i.exec(ctx.get('Authorization'));
      const [, scheme, jwt] = match ?? [];
      if (ctx.path === userinfoPath && scheme && jwt) {
        const found = await this.#twinFor(jwt);
        const dpop = scheme.toLowerCase() === 'dpop';
        const proven = found && (!dpop || (await provesKey(ctx, jwt, found.payload)));
        // Unknown or invalid JWTs and bad proofs go through untouched: the provider refuses them.
        if (found && proven) {
          ctx.req.headers.authorization = `Bearer ${found.twin}`;
          delete ctx.req.headers.dpop;
        }
      }
      await next();
    };
  }

  async #twinFor(jwt: string): Promise<{ twin: string; payload: JWTPayload } | undefined> {
    try {
      const { payload } = await jwtVerify(jwt, this.verification.publicKey, {
        issuer: this.provider().issuer,
        audience: this.verification.audience,
        typ: 'at+jwt',
      });
      const twin = payload.jti ? this.#twins.get(payload.jti)?.value : undefined;
      return twin ? { twin, payload } : undefined;
    } catch {
      return undefined;
    }
  }
}

/** RFC 9449 4.3 and 7.1, for the userinfo request in `ctx`: a proof of the key `token` is bound to. */
async function provesKey(ctx: Koa.Context, token: string, payload: JWTPayload): Promise<boolean> {
  const jkt = (payload.cnf as { jkt?: unknown } | undefined)?.jkt;
  try {
    const proof = await jwtVerify(ctx.get('DPoP'), EmbeddedJWK, {
      typ: 'dpop+jwt',
      algorithms: ['ES256'],
      maxTokenAge: '5m',
    });
    const claims = proof.payload as Record<string, unknown>;
    const url = new URL(ctx.href);
    return (
      claims.htm === ctx.method &&
      claims.htu === `${url.origin}${url.pathname}` &&
      claims.ath === createHash('sha256').update(token).digest('base64url') &&
      jkt === (await calculateJwkThumbprint(proof.protectedHeader.jwk as JWK, 'sha256'))
    );
  } catch {
    return false;
  }
}

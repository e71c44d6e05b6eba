/** The parts of an OpenID Provider's discovery document the server uses. */
export interface ProviderMetadata {
  issuer: string;
  jwks_uri: string;
  /** OpenID Connect Core 5.3: asked about opaque access tokens when the server cannot introspect them. */
  userinfo_endpoint: string | undefined;
  /** RFC 8414 section 2 / RFC 7662: where opaque access tokens are introspected. */
  introspection_endpoint: string | undefined;
  /** Origins the browser talks to for this provider (token, userinfo, JWKS, revocation...). */
  origins: string[];
  /** The algorithms a JWT access token may be signed with (see `accessTokenAlgorithms`). */
  accessTokenAlgorithms: string[];
}

/**
 * JWS algorithms with a public verification key (RFC 7518 3.3-3.5, RFC 8037, RFC 8812). `none` and
 * the HMAC family are never taken: an HS256 token "signed" with a public key, or an unsigned one, would
 * otherwise pass for the provider's.
 */
const ASYMMETRIC = new Set(
  'RS256 RS384 RS512 PS256 PS384 PS512 ES256 ES384 ES512 ES256K EdDSA Ed25519 Ed448'.split(' '),
);

/**
 * What the provider says it signs tokens with: `id_token_signing_alg_values_supported` (Discovery 1.0
 * section 3, required; providers sign JWT access tokens as they sign ID tokens, with the keys at the
 * same `jwks_uri`), and the `access_token_signing_alg_values_supported` some providers publish beside
 * it; only their asymmetric members. A provider that lists none of those: RS256, which every OpenID
 * provider must support.
 */
export function accessTokenAlgorithms(document: Record<string, unknown>): string[] {
  const listed = ['id_token_signing_alg_values_supported', 'access_token_signing_alg_values_supported']
    .flatMap((key) => (Array.isArray(document[key]) ? (document[key] as unknown[]) : []))
    .filter((alg): alg is string => typeof alg === 'string' && ASYMMETRIC.has(alg));
  return listed.length > 0 ? [...new Set(listed)] : ['RS256'];
}

/**
 * OpenID Connect Discovery 1.0, section 4: fetches the provider's configuration. The issuer it names
 * must equal the configured authority (section 4.3). A failed fetch is tried again on next use, so a
 * provider that is down at start does not stop the server.
 */
export class ProviderMetadataCache {
  private pending: Promise<ProviderMetadata> | undefined;
  private known: ProviderMetadata | undefined;

  constructor(
    private readonly authority: string,
    private readonly fetchImpl: typeof fetch = fetch,
  ) {}

  get(): Promise<ProviderMetadata> {
    this.pending ??= this.load().then(
      (metadata) => (this.known = metadata),
      (error: unknown) => {
        this.pending = undefined;
        throw error;
      },
    );
    return this.pending;
  }

  /** Whatever is known right now, without waiting (for building headers). */
  current(): ProviderMetadata | undefined {
    return this.known;
  }

  private async load(): Promise<ProviderMetadata> {
    const url = `${this.authority.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await this.fetchImpl(url, { signal: AbortSignal.timeout(5_000) });
    if (!response.ok) throw new Error(`GET ${url} answered ${response.status}`);
    const document = (await response.json()) as Record<string, unknown>;
    if (document.issuer !== this.authority) {
      throw new Error(
        `The discovery document's issuer ${JSON.stringify(document.issuer)} differs from the authority ${this.authority}`,
      );
    }
    if (typeof document.jwks_uri !== 'string') throw new Error('The discovery document has no jwks_uri');
    const origins = new Set<string>([new URL(this.authority).origin]);
    for (const key of [
      'token_endpoint',
      'userinfo_endpoint',
      'jwks_uri',
      'revocation_endpoint',
      'end_session_endpoint',
    ]) {
      const value = document[key];
      if (typeof value === 'string' && URL.canParse(value)) origins.add(new URL(value).origin);
    }
    const endpoint = (key: string) => {
      const value = document[key];
      return typeof value === 'string' && URL.canParse(value) ? value : undefined;
    };
    return {
      issuer: document.issuer,
      jwks_uri: document.jwks_uri,
      userinfo_endpoint: endpoint('userinfo_endpoint'),
      introspection_endpoint: endpoint('introspection_endpoint'),
      origins: [...origins],
      accessTokenAlgorithms: accessTokenAlgorithms(document),
    };
  }
}

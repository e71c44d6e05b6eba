import type { DpopPolicy } from './auth/bearer.js';
import { createDpopVerifier, DpopNonces, type ReplayTable } from './auth/dpop.js';
import { ProviderMetadataCache } from './auth/provider-metadata.js';
import { createTokenVerifier, type TokenVerifier } from './auth/token-verifier.js';
import type { ServerConfig } from './config.js';
import type { Logger } from './log.js';

/** How the API checks its callers: the provider's discovery, the token verifier and the DPoP policy. */
export interface ProviderAuth {
  /** The provider's discovery, read once and kept: the CSP and the readiness report read it too. */
  metadata: ProviderMetadataCache;
  verify: TokenVerifier;
  dpop: DpopPolicy;
}

export function createProviderAuth(
  options: {
    config: ServerConfig;
    authority: string;
    fetchImpl?: typeof fetch | undefined;
    replay?: ReplayTable | undefined;
  },
  logger: Logger,
): ProviderAuth {
  const { config, authority, fetchImpl, replay } = options;
  const metadata = new ProviderMetadataCache(authority, fetchImpl);
  // Learn the provider's endpoints early, for the Content-Security-Policy; failure is retried later.
  metadata
    .get()
    .catch((error: unknown) => logger.warn(`identity provider discovery failed: ${String(error)}`));
  const verify = createTokenVerifier({
    issuer: authority,
    audience: config.oidc.audience,
    rolesClaim: config.oidc.rolesClaim,
    metadata,
    introspectionClient: config.oidc.introspectionClient,
    ...(fetchImpl ? { fetchImpl } : {}),
  });
  const nonces = config.dpop.nonces ? new DpopNonces(config.dpop.nonceSecret) : undefined;
  const dpop: DpopPolicy = {
    verify: createDpopVerifier({ nonces, ...(replay ? { replay } : {}) }),
    required: config.dpop.mode === 'required',
    publicOrigin: config.publicOrigin,
    nonces,
  };
  return { metadata, verify, dpop };
}

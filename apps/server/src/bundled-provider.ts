import type { ServerConfig } from './config.js';

/** Starts the local OpenID provider (apps/dev-idp) as the configuration describes it. */
export async function startBundledProvider(config: ServerConfig, log: (line: string) => void) {
  const { startDevIdp } = await import('@gatehouse/dev-idp');
  return startDevIdp({
    port: config.devIdp.port,
    appOrigin: config.publicOrigin,
    clientId: config.oidc.clientId,
    apiResource: config.oidc.audience,
    testControls: config.devIdp.testControls,
    accessTokenFormat: config.devIdp.accessTokenFormat,
    dpop: config.devIdp.dpop,
    log,
    rolesClaim: config.devIdp.rolesClaim,
    // BFF mode: the server is the provider's confidential client (config.ts refuses other methods here).
    ...(config.bff?.clientAuth.method === 'client_secret_basic'
      ? { clientSecret: config.bff.clientAuth.secret }
      : {}),
    ...(config.oidc.introspectionClient ? { introspectionClient: config.oidc.introspectionClient } : {}),
    ...(config.devIdp.testControlsSecret === undefined
      ? {}
      : { testControlsSecret: config.devIdp.testControlsSecret }),
    ...(config.devIdp.accessTokenTtlSeconds === undefined
      ? {}
      : { accessTokenTtlSeconds: config.devIdp.accessTokenTtlSeconds }),
  });
}

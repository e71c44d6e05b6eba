import express, { type Request, type Response } from 'express';
import { accessLog } from './access-log.js';
import { apiRouter } from './api-mount.js';
import type { ApiDependencies } from './api.js';
import type { RefusalCounter } from './auth/bearer.js';
import type { ReplayTable } from './auth/dpop.js';
import { Bff } from './bff/bff.js';
import { createOAuthClient } from './bff/oauth-client.js';
import { SessionStore, type StoreBackend } from './bff/session-store.js';
import { mountCollector } from './collector-mount.js';
import type { ServerConfig } from './config.js';
import type { DevWeb } from './dev-web.js';
import { errorHandler } from './error-handler.js';
import { Readiness } from './health.js';
import { silentLogger, type Logger } from './log.js';
import { mountProbes } from './probes.js';
import { createProviderAuth } from './provider-auth.js';
import { trustProxies } from './proxy-trust.js';
import { securityHeaders } from './security-headers.js';
import { mountSpa } from './spa.js';

export { PERMISSIONS_POLICY } from './security-headers.js';
export { embedJson, publicConfig } from './spa.js';

/** The app's parts; the API's own (ApiDependencies, api.ts) are passed on to it as they are. */
export interface AppOptions extends ApiDependencies {
  config: ServerConfig;
  /** The authority in effect: the configured one, or the local development provider's. */
  authority: string;
  /** The built SPA (apps/web/dist). */
  webRoot: URL;
  /** Where the access log and errors go (log.ts); default: nowhere. */
  logger?: Logger;
  fetchImpl?: typeof fetch;
  /** The built-in telemetry collector (POST /v2/track, /v2.1/track), when this server hosts one. */
  collector?: { handle: (req: Request, res: Response, next: () => void) => void };
  /**
   * The store holder's internal API (/internal/…, token-protected) for the replicas that forward to this
   * process (docs/decisions/0041); undefined when it serves no other replica.
   */
  internalApi?: ((req: Request, res: Response, next: () => void) => void) | undefined;
  /** Development (`npm run dev`): the SPA from its sources through Vite instead of `webRoot`'s build. */
  devWeb?: DevWeb | undefined;
  /**
   * What /readyz reports (the caller's checks: store, Redis); the app adds the provider's discovery.
   * Default: a readiness of its own with only that check.
   */
  readiness?: Readiness;
  /** Where accepted DPoP proofs are remembered: Redis for every replica (shared-state.ts); default this process. */
  replay?: ReplayTable;
  /** Counts the API's refusals by reason (refusal-metrics.ts); default: not counted. */
  refusals?: RefusalCounter | undefined;
  /** BFF mode: where the sessions live (Redis, or the data folder; bff/session-store.ts). */
  bffStore?: StoreBackend | undefined;
}

/** BFF mode (OIDC_MODE=bff): the server as the OAuth client, and the browser's session cookie. */
function createBff(options: AppOptions, logger: Logger): Bff | undefined {
  const { config, authority, bffStore, fetchImpl } = options;
  if (!config.bff) return undefined;
  if (!bffStore) throw new Error('OIDC_MODE=bff needs a session store');
  return new Bff({
    oauth: createOAuthClient({
      authority,
      clientId: config.oidc.clientId,
      clientAuth: config.bff.clientAuth,
      fetchImpl,
    }),
    store: new SessionStore(bffStore),
    issuer: authority,
    publicOrigin: config.publicOrigin,
    scope: config.oidc.scope,
    rolesClaim: config.oidc.rolesClaim,
    extraQueryParams: config.oidc.extraQueryParams,
    idleMs: config.bff.idleMs,
    maxMs: config.bff.maxMs,
    logger,
  });
}

/**
 * The whole server, as the steps of a request's way through it, in order: each step's file says what it
 * does and why.
 */
export function createApp(options: AppOptions) {
  const logger = options.logger ?? silentLogger;
  const auth = createProviderAuth(options, logger);
  const app = express();
  app.disable('x-powered-by');
  trustProxies(app, options.config.trustProxy);
  app.use(accessLog(logger));
  app.use(securityHeaders({ ...options, metadata: auth.metadata }));
  mountProbes(app, options.readiness ?? new Readiness(), auth.metadata);
  mountCollector(app, options);
  const bff = createBff(options, logger);
  if (bff) app.use('/bff', bff.router());
  app.use(
    '/api',
    ...(bff ? [bff.apiSession] : []),
    apiRouter({ ...options, verify: auth.verify, dpop: auth.dpop }),
  );
  mountSpa(app, options);
  app.use(errorHandler(logger));
  return app;
}

import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { errorBody, type RuntimeConfig } from '@gatehouse/api-contract';
import { StoreUnavailable } from '@gatehouse/collector';
import express, { type ErrorRequestHandler, type Request, type Response } from 'express';
import expressStaticGzip from 'express-static-gzip';
import helmet from 'helmet';
import { createApi, type ApiDependencies } from './api.js';
import type { DpopPolicy, RefusalCounter } from './auth/bearer.js';
import { createTokenVerifier } from './auth/token-verifier.js';
import { createDpopVerifier, DpopNonces, type ReplayTable } from './auth/dpop.js';
import { ProviderMetadataCache } from './auth/provider-metadata.js';
import { parseConnectionString, type ServerConfig } from './config.js';
import type { DevWeb } from './dev-web.js';
import { trustProxies } from './proxy-trust.js';
import { isReady, Readiness } from './health.js';
import { requestId, silentLogger, traceId, type Logger } from './log.js';

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
}

/** Telemetry batches, sent by browsers or forwarded by the other replicas to the store holder. */
const INGESTION_PATH = /^\/(v2(\.1)?\/track|internal\/collector\/append)$/;
/** Probed every few seconds by each balancer: only their failures are news in the access log. */
const PROBE_PATHS = new Set(['/healthz', '/readyz']);
/** The build's HTML file under its own names: it holds no configuration, so it is never served as is. */
const RAW_INDEX = /^\/index\.html(\.(br|gz))?$/;
/**
 * Powerful features the app never uses, switched off for it and for anything it embeds: a script
 * injected despite the CSP still cannot reach the camera, the microphone or the position.
 */
export const PERMISSIONS_POLICY = [
  'accelerometer=()',
  'browsing-topics=()',
  'camera=()',
  'display-capture=()',
  'geolocation=()',
  'gyroscope=()',
  'magnetometer=()',
  'microphone=()',
  'payment=()',
  'usb=()',
].join(', ');

/** The public subset of the configuration the SPA receives at run time: never a secret. */
export function publicConfig(config: ServerConfig, authority: string): RuntimeConfig {
  return {
    oidc: {
      authority,
      clientId: config.oidc.clientId,
      scope: config.oidc.scope,
      rolesClaim: config.oidc.rolesClaim,
      tokenStore: config.oidc.tokenStore,
      extraQueryParams: config.oidc.extraQueryParams,
    },
    telemetry: { connectionString: config.telemetry.connectionString, consent: config.telemetry.consent },
  };
}

/** JSON inside <script type="application/json">: `<` is escaped so no value can close the element. */
export function embedJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, '\\u003c')
    .replace(/\u2028/g, '\\u2028')
    .replace(/\u2029/g, '\\u2029');
}

export function createApp(options: AppOptions) {
  const { config, authority } = options;
  const logger = options.logger ?? silentLogger;
  const metadata = new ProviderMetadataCache(authority, options.fetchImpl);
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
    ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
  });
  const readiness = options.readiness ?? new Readiness();
  // Tokens cannot be checked before the provider's discovery (its issuer and keys) has been read once;
  // but the provider is every replica's, so it degrades readiness rather than failing it: the app, its
  // configuration and the telemetry are still served, and the API answers 503 until discovery is read.
  readiness.add('provider', async () => metadata.current() !== undefined || Boolean(await metadata.get()), {
    shared: true,
  });

  const nonces = config.dpop.nonces ? new DpopNonces(config.dpop.nonceSecret) : undefined;
  const dpop: DpopPolicy = {
    verify: createDpopVerifier({ nonces, ...(options.replay ? { replay: options.replay } : {}) }),
    required: config.dpop.mode === 'required',
    publicOrigin: config.publicOrigin,
    nonces,
  };

  const app = express();
  app.disable('x-powered-by');
  trustProxies(app, config.trustProxy);
  const { devWeb } = options;
  // Development only: Vite's client and React's refresh preamble are inline scripts, and its styles are
  // <style> elements; each carries this request's nonce, and the HMR websocket is on this origin (ADR 0055).
  const devOnly = (directive: 'script' | 'connect') =>
    devWeb
      ? [
          directive === 'connect'
            ? () => config.publicOrigin.replace(/^http/, 'ws')
            : (_req: unknown, res: unknown) => `'nonce-${(res as Response).locals.cspNonce as string}'`,
        ]
      : [];
  if (devWeb) {
    app.use((_req, res, next) => {
      res.locals.cspNonce = randomBytes(16).toString('base64');
      next();
    });
  }

  // Access log: method, path and status only; a query string can carry an authorization code, and no
  // header is logged (Authorization, DPoP, cookies). The path is read now, as routers rewrite req.path
  // (`/me` inside the /api router); a refusal says why. Every line about a request carries its id (the
  // balancer's X-Request-Id when safe, echoed back) and the W3C trace id when the request has one.
  app.use((req, res, next) => {
    const started = performance.now();
    const path = req.path;
    const ids = { reqId: requestId(req), traceId: traceId(req) };
    res.locals.logIds = ids;
    res.set('X-Request-Id', ids.reqId);
    res.on('finish', () => {
      // Accepted telemetry batches arrive every few seconds per visitor: only their failures are news.
      if (res.statusCode < 300 && (INGESTION_PATH.test(path) || PROBE_PATHS.has(path))) return;
      const reason = typeof res.locals.authFailure === 'string' ? res.locals.authFailure : undefined;
      const ms = Math.round(performance.now() - started);
      logger[res.statusCode >= 500 ? 'warn' : 'info'](
        { ...ids, method: req.method, path, status: res.statusCode, ms, reason },
        `${req.method} ${path} ${res.statusCode} ${ms}ms${reason ? ` (${reason})` : ''}`,
      );
    });
    next();
  });

  app.use(
    helmet({
      contentSecurityPolicy: {
        useDefaults: false,
        directives: {
          'default-src': ["'self'"],
          'script-src': ["'self'", ...devOnly('script')],
          'style-src': ["'self'", ...devOnly('script')],
          'img-src': ["'self'", 'data:'],
          'font-src': ["'self'"],
          'connect-src': [
            "'self'",
            () => connectOrigins(authority, metadata, config).join(' '),
            ...devOnly('connect'),
          ],
          'frame-ancestors': ["'none'"],
          'form-action': ["'self'"],
          'base-uri': ["'none'"],
          'object-src': ["'none'"],
        },
      },
      referrerPolicy: { policy: 'no-referrer' },
      // A browsing context group of the app's own: no other site's window keeps a handle on a page
      // holding tokens, and browsers that do not isolate every site give it a process of its own.
      crossOriginOpenerPolicy: { policy: 'same-origin' },
      // Not sent: browsers key agent clusters by origin without it (Chromium since 110), and in Chromium
      // it asks for an origin-keyed process, a new one on every navigation into the app (ADR 0038).
      originAgentCluster: false,
      // HSTS only where the request really came over https (set below).
      strictTransportSecurity: false,
    }),
  );
  app.use((req, res, next) => {
    res.set('Permissions-Policy', PERMISSIONS_POLICY);
    if (req.secure) res.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    next();
  });
  // --- probes: unauthenticated and cheap (readiness reuses its checks for a second) ---
  app.get('/healthz', (_req, res) => {
    res.set('Cache-Control', 'no-store').type('text/plain').send('ok');
  });
  app.get('/readyz', (_req, res, next) => {
    readiness.report().then((report) => {
      res
        .status(isReady(report) ? 200 : 503)
        .set('Cache-Control', 'no-store')
        .json(report);
    }, next);
  });

  // --- the store holder's internal API, for the other replicas: nothing under it without the token ---
  if (options.internalApi) app.use(options.internalApi);
  // --- telemetry ingestion, on this origin: no CORS, no third-party host for blockers to drop ---
  if (options.collector) app.use(options.collector.handle);

  // --- the product API ---
  const api = express.Router();
  // Every answer, 401/403/404 and errors included: none may be kept by a browser or a shared cache.
  api.use((_req, res, next) => {
    res.set('Cache-Control', 'no-store');
    next();
  });
  api.use(express.json({ limit: '100kb' }));
  api.use(createApi({ ...options, verify, dpop, refusals: options.refusals }));
  api.use((_req, res) => {
    res.status(404).json(errorBody('not_found', 'There is no API endpoint at this path.'));
  });
  app.use('/api', api);

  const onError: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
    if (error instanceof StoreUnavailable) {
      // Another replica holds the store and cannot answer now (restarting): the dashboard asks again.
      res.status(503).set('Retry-After', '5').json(errorBody('store_unavailable', error.message));
      return;
    }
    const status =
      (error as { status?: number }).status ?? (error as { statusCode?: number }).statusCode ?? 500;
    if (status >= 500) logger.error({ ...res.locals.logIds, err: error }, String(error));
    // 503 is the provider being unreachable (bearer.ts); 4xx here is a body express could not read.
    res
      .status(status)
      .json(
        status === 503
          ? errorBody('provider_unavailable', (error as Error).message)
          : status >= 500
            ? errorBody('server_error', 'Something went wrong on the server.')
            : errorBody('bad_request', 'The request is invalid.'),
      );
  };

  // --- the SPA ---
  if (devWeb) {
    app.use(devWeb.handle);
    app.get('/{*path}', async (req: Request, res: Response, next) => {
      if (!req.accepts('html')) return next();
      try {
        const html = await devWeb.html(req.originalUrl, res.locals.cspNonce as string);
        const page = withConfig(html, publicConfig(config, authority));
        res
          .set('Cache-Control', 'no-store')
          .type('html')
          .send(page[req.path === '/' ? 'home' : 'other']);
      } catch (error) {
        next(error);
      }
    });
    app.use(onError);
    return app;
  }
  const indexHtml = readFile(new URL('index.html', options.webRoot), 'utf8').then((html) =>
    withConfig(html, publicConfig(config, authority)),
  );
  // Read once, at start. A missing or broken build is reported by every page request (a 500 with the
  // reason in the log), not as an unhandled rejection that would end the process before any request.
  indexHtml.catch(() => undefined);
  // Assets are compressed at build time (brotli, gzip): no compression work per request.
  const precompressed = { enableBrotli: true, orderPreference: ['br', 'gzip'], index: false };
  app.use((req, res, next) => {
    // The raw build file would boot the app without its configuration: send the page itself.
    if (RAW_INDEX.test(req.path)) return res.redirect(301, '/');
    // Source maps are built for operators, not published (docs/decisions/0016).
    if (req.path.endsWith('.map')) return notFound(res);
    next();
  });
  app.use(
    '/assets',
    expressStaticGzip(new URL('assets/', options.webRoot).pathname, {
      ...precompressed,
      serveStatic: { immutable: true, maxAge: '1y' },
    }),
  );
  // A missing script or style is a 404, never the app's HTML (which the browser would then refuse).
  app.use('/assets', (_req, res) => notFound(res));
  app.use(expressStaticGzip(options.webRoot.pathname, { ...precompressed, serveStatic: { maxAge: '1h' } }));
  app.get('/{*path}', async (req: Request, res: Response, next) => {
    if (!req.accepts('html')) return next();
    try {
      res
        .set('Cache-Control', 'no-store')
        .type('html')
        .send((await indexHtml)[req.path === '/' ? 'home' : 'other']);
    } catch (error) {
      next(error);
    }
  });
  app.use(onError);
  return app;
}

function notFound(res: Response): void {
  res.status(404).set('Cache-Control', 'no-store').type('text/plain').send('Not found');
}

function connectOrigins(authority: string, metadata: ProviderMetadataCache, config: ServerConfig): string[] {
  const origins = new Set(metadata.current()?.origins ?? [new URL(authority).origin]);
  const ingestion = config.telemetry.external
    ? telemetryOrigin(config.telemetry.connectionString)
    : undefined;
  if (ingestion) origins.add(ingestion);
  return [...origins];
}

function telemetryOrigin(connectionString: string | undefined): string | undefined {
  const endpoint = connectionString && parseConnectionString(connectionString).ingestionendpoint;
  return endpoint && URL.canParse(endpoint) ? new URL(endpoint).origin : undefined;
}

/**
 * The page, with the public configuration in it, twice: for `/`, whose static first render (index.html's
 * shell) holds the home page, and for every other path, without it (the route's page renders there).
 */
function withConfig(html: string, config: unknown): { home: string; other: string } {
  // (Vite's dev server adds a nonce attribute.)
  const marker = /(<script id="gatehouse-config" type="application\/json"[^>]*>)[\s\S]*?(<\/script>)/;
  if (!marker.test(html)) throw new Error('The built index.html has no gatehouse-config element.');
  const home = html.replace(
    marker,
    (_match, open: string, close: string) => `${open}${embedJson(config)}${close}`,
  );
  return { home, other: home.replace(/<!-- home -->[\s\S]*?<!-- \/home -->/, '') };
}

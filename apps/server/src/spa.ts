import { readFile } from 'node:fs/promises';
import type { RuntimeConfig } from '@gatehouse/api-contract';
import type { Express, Request, Response } from 'express';
import expressStaticGzip from 'express-static-gzip';
import type { ServerConfig } from './config.js';
import type { DevWeb } from './dev-web.js';

/** The build's HTML file under its own names: it holds no configuration, so it is never served as is. */
const RAW_INDEX = /^\/index\.html(\.(br|gz))?$/;

/** The public subset of the configuration the SPA receives at run time: never a secret. */
export function publicConfig(config: ServerConfig, authority: string): RuntimeConfig {
  return {
    oidc: {
      mode: config.oidc.mode,
      authority,
      clientId: config.oidc.clientId,
      scope: config.oidc.scope,
      rolesClaim: config.oidc.rolesClaim,
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

export interface SpaOptions {
  config: ServerConfig;
  /** The authority in effect, as the SPA's configuration names it. */
  authority: string;
  /** The built SPA (apps/web/dist). */
  webRoot: URL;
  /** Development (`npm run dev`): the SPA from its sources through Vite instead of `webRoot`'s build. */
  devWeb?: DevWeb | undefined;
}

/**
 * The SPA, after every other path: its page, with the public configuration in it, for any path that
 * asks for HTML; from Vite in development, else the build's files.
 */
export function mountSpa(app: Express, options: SpaOptions): void {
  const { devWeb } = options;
  if (devWeb) {
    mountDevSpa(app, devWeb, options);
    return;
  }
  mountBuiltSpa(app, options);
}

function mountDevSpa(app: Express, devWeb: DevWeb, { config, authority }: SpaOptions): void {
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
}

function mountBuiltSpa(app: Express, { config, authority, webRoot }: SpaOptions): void {
  const indexHtml = readFile(new URL('index.html', webRoot), 'utf8').then((html) =>
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
    expressStaticGzip(new URL('assets/', webRoot).pathname, {
      ...precompressed,
      serveStatic: { immutable: true, maxAge: '1y' },
    }),
  );
  // A missing script or style is a 404, never the app's HTML (which the browser would then refuse).
  app.use('/assets', (_req, res) => notFound(res));
  app.use(expressStaticGzip(webRoot.pathname, { ...precompressed, serveStatic: { maxAge: '1h' } }));
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
}

function notFound(res: Response): void {
  res.status(404).set('Cache-Control', 'no-store').type('text/plain').send('Not found');
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

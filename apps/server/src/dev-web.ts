import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { fileURLToPath } from 'node:url';
import type { NextFunction, Request, Response } from 'express';
import type { ViteDevServer } from 'vite';

/** What Vite writes where a script or style needs the request's nonce; replaced per request. */
const NONCE_PLACEHOLDER = '__GATEHOUSE_CSP_NONCE__';

/**
 * Development only (`npm run dev`, ADR 0055): the SPA from its sources through Vite's dev server in
 * middleware mode, on the app server's own origin, so /api, the collector, the runtime configuration and
 * the security headers are the production ones. Hot module replacement uses a websocket on the same
 * server. Vite is imported only here, and only when this is made.
 */
export class DevWeb {
  private readonly vite: Promise<ViteDevServer>;
  private attach: (server: Server) => void = () => undefined;

  /** `webRoot`: the SPA's folder (apps/web/), where index.html and vite.config.ts are. */
  constructor(private readonly webRoot: URL) {
    this.vite = new Promise<Server>((resolve) => (this.attach = resolve)).then(async (server) => {
      const { createServer } = await import('vite');
      return createServer({
        root: fileURLToPath(webRoot),
        configFile: fileURLToPath(new URL('vite.config.ts', webRoot)),
        appType: 'custom',
        // The HMR websocket shares the app's port: same origin, nothing more to open.
        server: { middlewareMode: true, hmr: { server } },
        // Vite marks its scripts and styles with this nonce; the CSP names it (app.ts).
        html: { cspNonce: NONCE_PLACEHOLDER },
      });
    });
    // A failure here is reported by the requests that wait for it, not as an unhandled rejection.
    this.vite.catch(() => undefined);
  }

  /** Starts Vite on the server that listens (its HMR websocket is served there). */
  listening(server: Server): Promise<void> {
    this.attach(server);
    return this.vite.then(() => undefined);
  }

  /** Vite's middlewares: the SPA's modules, the HMR client, the public folder. */
  readonly handle = (req: Request, res: Response, next: NextFunction): void => {
    this.vite.then((vite) => vite.middlewares(req, res, next), next);
  };

  /** index.html as Vite serves it for `url` (its client and React's refresh preamble), with `nonce`. */
  async html(url: string, nonce: string): Promise<string> {
    const vite = await this.vite;
    const source = await readFile(new URL('index.html', this.webRoot), 'utf8');
    return (await vite.transformIndexHtml(url, source)).replaceAll(NONCE_PLACEHOLDER, nonce);
  }

  async close(): Promise<void> {
    await (await this.vite.catch(() => undefined))?.close();
  }
}

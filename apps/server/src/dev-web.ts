import { realpathSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { NextFunction, Request, Response } from 'express';
import type { ViteDevServer } from 'vite';
import type { ServerConfig } from './config.js';

/** What Vite writes where a script or style needs the request's nonce; replaced per request. */
const NONCE_PLACEHOLDER = '__GATEHOUSE_CSP_NONCE__';

/**
 * Vite's own `server.fs.deny` (8.x): a list given replaces it, so it is repeated before ours. Keys and
 * certificates by their extensions, .env files, package managers' credentials, git's folder.
 */
const VITE_DEFAULT_DENY = [
  '.env',
  '.env.*',
  '*.{crt,pem,key,p12,pfx,cer,der}',
  '.npmrc',
  '.yarnrc.yml',
  '**/.git/**',
];

/**
 * What Vite must never serve, though it lies in the repository that its `/@fs/` route reads: the data
 * folder (the store, its journal, the user id key) and the TLS certificate's key, as absolute paths.
 */
export function devDeniedPaths(config: Pick<ServerConfig, 'collector' | 'tls'>): string[] {
  return [config.collector.dataDir, ...(config.tls ? [config.tls.keyFile] : [])].map((path) => resolve(path));
}

/** `path` and everything under it, as picomatch globs, for itself and for where its links lead. */
function denyGlobs(path: string): string[] {
  let real = path;
  try {
    real = realpathSync(path);
  } catch {
    // Not there yet (the data folder is made on the first start): its own name is all there is.
  }
  return [...new Set([path, real])].flatMap((p) => {
    const glob = p.replace(/[\\*?[\]{}()!+@|]/g, '\\$&');
    return [glob, `${glob}/**`];
  });
}

/**
 * Development only (`npm run dev`, ADR 0055): the SPA from its sources through Vite's dev server in
 * middleware mode, on the app server's own origin, so /api, the collector, the runtime configuration and
 * the security headers are the production ones. Hot module replacement uses a websocket on the same
 * server. Vite is imported only here, and only when this is made.
 */
export class DevWeb {
  private readonly vite: Promise<ViteDevServer>;
  private attach: (server: Server) => void = () => undefined;

  /**
   * `webRoot`: the SPA's folder (apps/web/), where index.html and vite.config.ts are. `denied`: absolute
   * paths (folders or files) Vite refuses with 403 (devDeniedPaths), beside its own denials.
   */
  constructor(
    private readonly webRoot: URL,
    denied: readonly string[],
  ) {
    this.vite = new Promise<Server>((resolve) => (this.attach = resolve)).then(async (server) => {
      const { createServer } = await import('vite');
      return createServer({
        root: fileURLToPath(webRoot),
        configFile: fileURLToPath(new URL('vite.config.ts', webRoot)),
        appType: 'custom',
        server: {
          middlewareMode: true,
          // The HMR websocket shares the app's port: same origin, nothing more to open.
          hmr: { server },
          // /@fs/ reads the whole repository (the workspace packages' sources): all but these.
          fs: { deny: [...VITE_DEFAULT_DENY, ...denied.flatMap(denyGlobs)] },
        },
        // Vite marks its scripts and styles with this nonce; the CSP names it (security-headers.ts).
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

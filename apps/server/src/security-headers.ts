import { randomBytes } from 'node:crypto';
import type { RequestHandler, Response } from 'express';
import helmet from 'helmet';
import type { ProviderMetadataCache } from './auth/provider-metadata.js';
import { parseConnectionString, type ServerConfig } from './config.js';
import type { DevWeb } from './dev-web.js';

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

/**
 * The headers of every answer: the Content-Security-Policy (naming the provider's origins as its
 * discovery says them, and the telemetry endpoint), the isolation headers, Permissions-Policy, and HSTS
 * where the request came over https.
 */
export function securityHeaders(options: {
  config: ServerConfig;
  authority: string;
  metadata: ProviderMetadataCache;
  /** Development: Vite's inline scripts and styles, allowed by a nonce per request. */
  devWeb?: DevWeb | undefined;
}): RequestHandler[] {
  const { config, authority, metadata } = options;
  const dev = options.devWeb !== undefined;
  // Development only: Vite's client and React's refresh preamble are inline scripts, and its styles are
  // <style> elements; each carries this request's nonce, and the HMR websocket is on this origin (ADR 0055).
  const devOnly = (directive: 'script' | 'connect') =>
    dev
      ? [
          directive === 'connect'
            ? () => config.publicOrigin.replace(/^http/, 'ws')
            : (_req: unknown, res: unknown) => `'nonce-${(res as Response).locals.cspNonce as string}'`,
        ]
      : [];
  const nonce: RequestHandler = (_req, res, next) => {
    res.locals.cspNonce = randomBytes(16).toString('base64');
    next();
  };
  const csp = helmet({
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
  });
  const permissionsAndHsts: RequestHandler = (req, res, next) => {
    res.set('Permissions-Policy', PERMISSIONS_POLICY);
    if (req.secure) res.set('Strict-Transport-Security', 'max-age=31536000; includeSubDomains');
    next();
  };
  return [...(dev ? [nonce] : []), csp, permissionsAndHsts];
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

import type { Express } from 'express';
import type { ProviderMetadataCache } from './auth/provider-metadata.js';
import { isReady, type Readiness } from './health.js';

/**
 * `/healthz` and `/readyz`: unauthenticated and cheap (readiness reuses its checks for a second).
 * The readiness given gains the provider's discovery as a check.
 */
export function mountProbes(app: Express, readiness: Readiness, metadata: ProviderMetadataCache): void {
  // Tokens cannot be checked before the provider's discovery (its issuer and keys) has been read once;
  // but the provider is every replica's, so it degrades readiness rather than failing it: the app, its
  // configuration and the telemetry are still served, and the API answers 503 until discovery is read.
  readiness.add('provider', async () => metadata.current() !== undefined || Boolean(await metadata.get()), {
    shared: true,
  });
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
}

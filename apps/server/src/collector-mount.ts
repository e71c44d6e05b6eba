import type { Express, Request, Response } from 'express';

type Handler = (req: Request, res: Response, next: () => void) => void;

/**
 * The collector's paths, before the API and the SPA: telemetry ingestion on this origin (no CORS, no
 * third-party host for blockers to drop), and the store holder's internal API for the other replicas
 * (nothing under it without the token).
 */
export function mountCollector(
  app: Express,
  options: {
    collector?: { handle: Handler } | undefined;
    internalApi?: Handler | undefined;
  },
): void {
  if (options.internalApi) app.use(options.internalApi);
  if (options.collector) app.use(options.collector.handle);
}

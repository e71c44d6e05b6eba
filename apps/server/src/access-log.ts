import type { RequestHandler } from 'express';
import { requestId, traceId, type Logger } from './log.js';

/** Telemetry batches, sent by browsers or forwarded by the other replicas to the store holder. */
const INGESTION_PATH = /^\/(v2(\.1)?\/track|internal\/collector\/append)$/;
/** Probed every few seconds by each balancer: only their failures are news in the access log. */
const PROBE_PATHS = new Set(['/healthz', '/readyz']);

/**
 * Access log: method, path and status only; a query string can carry an authorization code, and no
 * header is logged (Authorization, DPoP, cookies). The path is read now, as routers rewrite req.path
 * (`/me` inside the /api router); a refusal says why. Every line about a request carries its id (the
 * balancer's X-Request-Id when safe, echoed back) and the W3C trace id when the request has one.
 */
export function accessLog(logger: Logger): RequestHandler {
  return (req, res, next) => {
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
  };
}

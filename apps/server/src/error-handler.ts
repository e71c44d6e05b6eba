import { errorBody } from '@gatehouse/api-contract';
import { StoreUnavailable } from '@gatehouse/collector';
import type { ErrorRequestHandler } from 'express';
import type { Logger } from './log.js';

/** The last handler: an error as a JSON answer whose status says whose it is; only 5xx are logged. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, _req, res, _next) => {
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
}

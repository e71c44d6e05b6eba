import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { pino, type DestinationStream, type Logger } from 'pino';

export type { Logger } from 'pino';

// LOG_LEVEL's values, pino's names: defined with the rest of the environment (packages/config).
import type { LogLevelName } from '@gatehouse/config';
export { LOG_LEVELS, type LogLevelName } from '@gatehouse/config';

/**
 * The server's one logger: JSON, one object a line, with `time` (ISO 8601), `level` (its name, as log
 * pipelines read it), `msg`, and `reqId`/`traceId` on lines about a request (docs/decisions/0045).
 * Written synchronously to stdout (pino's default), so nothing is lost when the process exits.
 */
export function createLogger(level: LogLevelName, destination?: DestinationStream): Logger {
  const options = {
    level,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label: string) => ({ level: label }) },
  };
  return destination ? pino(options, destination) : pino(options);
}

/** A logger that drops everything (tests that do not look at the log). */
export const silentLogger: Logger = pino({ level: 'silent' });

/**
 * An incoming `X-Request-Id` is kept only when short and made of safe characters (a balancer's UUID or
 * hex id), so a client cannot inject log fields, line breaks or megabytes; otherwise one is made.
 */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

export function requestId(req: IncomingMessage): string {
  const given = req.headers['x-request-id'];
  return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : randomUUID();
}

/**
 * The trace id of a valid W3C `traceparent` (Trace Context level 1, section 3.2): version 00 exactly,
 * or a later version's first four fields; an all-zero trace or parent id is invalid. Undefined otherwise.
 */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;

export function traceId(req: IncomingMessage): string | undefined {
  const header = req.headers.traceparent;
  if (typeof header !== 'string') return undefined;
  const match = TRACEPARENT.exec(header.trim());
  if (!match) return undefined;
  const [, version, trace, parent, , rest] = match;
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (/^0+$/.test(trace ?? '') || /^0+$/.test(parent ?? '')) return undefined;
  return trace;
}

import type { ServerResponse } from 'node:http';
import type { ItemError } from '../protocol/ingest.js';
import { lingerOnClose } from './lingering-close.js';

/*
 * The collector's answers, in the shape of the ingestion service's, which the SDKs read to know what to
 * resend.
 */

/** The ingestion service's answer: https://github.com/microsoft/ApplicationInsights-node.js/blob/develop/Library/Sender.ts */
export interface BreezeResponse {
  itemsReceived: number;
  itemsAccepted: number;
  errors: { index: number; statusCode: number; message: string }[];
}

export function send(
  res: ServerResponse,
  statusCode: number,
  body: BreezeResponse,
  headers: Record<string, string> = {},
): void {
  const json = JSON.stringify(body);
  res.writeHead(statusCode, {
    ...headers,
    'Content-Type': 'application/json; charset=utf-8',
    'Content-Length': Buffer.byteLength(json),
  });
  res.end(json);
}

/** No item could be read, so the one error names the body (index 0), in the service's shape. */
export function bodyRefused(statusCode: number, message: string): BreezeResponse {
  return { itemsReceived: 0, itemsAccepted: 0, errors: [{ index: 0, statusCode, message }] };
}

/**
 * Nothing stored this time: every valid item is marked `statusCode` (429/503), which both SDKs resend
 * item by item, and invalid items keep their 400, which they drop.
 */
export function retryLater(
  received: number,
  invalid: ItemError[],
  statusCode: number,
  message: string,
): BreezeResponse {
  const byIndex = new Map(invalid.map((e) => [e.index, e]));
  return {
    itemsReceived: received,
    itemsAccepted: 0,
    errors: Array.from(
      { length: received },
      (_, index) => byIndex.get(index) ?? { index, statusCode, message },
    ),
  };
}

/**
 * Some of a batch stored, the rest over the rate limit: each valid item not stored is marked 429,
 * which the SDKs resend item by item (they drop the 400s).
 */
export function partlyAccepted(
  received: number,
  checked: number,
  invalid: ItemError[],
  stored: number,
  message: string,
): BreezeResponse {
  const refused = new Set(invalid.map((e) => e.index));
  const errors = [...invalid];
  let valid = 0;
  for (let index = 0; index < checked; index++) {
    if (!refused.has(index) && valid++ >= stored) errors.push({ index, statusCode: 429, message });
  }
  errors.sort((a, b) => a.index - b.index);
  return { itemsReceived: received, itemsAccepted: stored, errors };
}

/**
 * Refused before the body was read, so no item can be named: an empty answer, which every SDK takes as
 * "resend the whole batch" (Node.js 2.x resends all when the answer is not JSON, 3.x when it is empty,
 * the browser on the status alone); the connection is closed, since the body is left unread.
 */
export function refuseUnread(
  res: ServerResponse,
  statusCode: 429 | 503,
  retryAfterSeconds: number,
  headers: Record<string, string>,
): void {
  res.writeHead(statusCode, {
    ...headers,
    'Retry-After': String(retryAfterSeconds),
    'Content-Length': 0,
    Connection: 'close',
  });
  lingerOnClose(res);
  res.end();
}

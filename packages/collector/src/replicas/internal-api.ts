import { createHash, timingSafeEqual } from 'node:crypto';
import type { UsageQueries } from '../analytics/usage-answers.js';
import { RS, type PackedItems } from '../protocol/packed.js';
import type { AnnotationQueries } from '../store/annotations.js';

/*
 * The internal API between replicas and the one process that holds the store (docs/decisions/0041): what
 * a forwarding replica sends, and how both sides check the shared token. Never part of the public API
 * contract, never reachable without the token.
 */

/** Every internal path starts with it; the load balancer refuses it from outside (docs/replicas.md). */
export const INTERNAL_PREFIX = '/internal/';
/** POST: packed items to append, answered once the store holder's journal has them. */
export const APPEND_PATH = '/internal/collector/append';
/** GET: 204 while the store holder takes items (for a replica's readiness). */
export const PING_PATH = '/internal/collector/ping';
/** POST `/internal/usage/<query>` with the query's arguments as a JSON array. */
export const QUERY_PREFIX = '/internal/usage/';

/** How a query is answered: `{ result }` in JSON, or a stream of JSON lines (one user's items). */
type RemoteAnswer = 'json' | 'ndjson';

/**
 * The queries a replica asks the store holder for by these names, both sides reading this one list
 * (the compiler holds it to the interfaces): the usage queries every back-end answers, and the
 * annotations (only the store holder writes its file). The panels' queries are asked by their
 * registry's names (dashboard/dashboard-queries.ts); any other name is 404.
 */
export const REMOTE_QUERIES = {
  usage: {
    overview: 'json',
    sessions: 'json',
    sessionTimeline: 'json',
    userItems: 'ndjson',
    eraseUser: 'json',
    signedInUserIds: 'json',
  },
  annotations: {
    listAnnotations: 'json',
    addAnnotation: 'json',
    deleteAnnotation: 'json',
    annotationsBy: 'json',
  },
} as const satisfies {
  usage: Record<keyof UsageQueries, RemoteAnswer>;
  annotations: Record<keyof AnnotationQueries, RemoteAnswer>;
};
export const PACKED_TYPE = 'application/vnd.gatehouse.packed-items';
/** The shared secret's least length, in characters (as TELEMETRY_USER_ID_SECRET's). */
export const MIN_TOKEN_LENGTH = 32;

/** Why the packed items of a request could not be read. */
export class PackedFormatError extends Error {
  override readonly name = 'PackedFormatError';
  readonly code = 'packed_items_invalid';
}

/**
 * Packed items on the wire: the count, a line; the item keys, comma-separated, a line; then the rows
 * as the store writes them to its journal (each ending with RS). The rows go as they are: the store
 * holder appends them without parsing an item again.
 */
export function encodePacked(items: PackedItems): Buffer {
  return Buffer.from(`${items.count}\n${items.keys.join(',')}\n${items.chunks.join('')}`, 'utf8');
}

/** The inverse of `encodePacked`; checks that counts agree, so a cut or mangled body is refused whole. */
export function decodePacked(body: Buffer): PackedItems {
  const text = body.toString('utf8');
  const first = text.indexOf('\n');
  const second = first < 0 ? -1 : text.indexOf('\n', first + 1);
  if (second < 0) throw new PackedFormatError('The body is not packed items: a header line is missing.');
  const count = Number(text.slice(0, first));
  const keyText = text.slice(first + 1, second);
  const keys = keyText === '' ? [] : keyText.split(',').map(Number);
  const rows = text.slice(second + 1);
  if (!Number.isSafeInteger(count) || count < 0 || keys.length !== count)
    throw new PackedFormatError('The item count and the keys do not agree.');
  if (!keys.every((key) => Number.isSafeInteger(key) && key >= 0))
    throw new PackedFormatError('An item key is not a whole number.');
  let ends = 0;
  for (let at = rows.indexOf(RS); at >= 0; at = rows.indexOf(RS, at + 1)) ends++;
  if (ends !== count || (count > 0 && !rows.endsWith(RS)))
    throw new PackedFormatError('The rows and the item count do not agree.');
  return { count, chunks: rows ? [rows] : [], keys };
}

/** `Authorization: Bearer <token>` for the internal API. */
export const authorization = (token: string) => `Bearer ${token}`;

/**
 * Whether an Authorization header carries `token`, in constant time: both sides are hashed first, so
 * neither the comparison nor the length of the header tells anything about the token.
 */
export function holdsToken(header: string | undefined, token: string): boolean {
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(header ?? ''), digest(authorization(token)));
}

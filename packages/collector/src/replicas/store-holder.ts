import type { IncomingMessage, ServerResponse } from 'node:http';
import { once } from 'node:events';
import { BodyError, readBody } from '../protocol/body.js';
import type { Logger } from '../logger.js';
import {
  APPEND_PATH,
  decodePacked,
  holdsToken,
  INTERNAL_PREFIX,
  MIN_TOKEN_LENGTH,
  PACKED_TYPE,
  PackedFormatError,
  PING_PATH,
  QUERY_PREFIX,
  REMOTE_QUERIES,
} from './internal-api.js';
import type { ItemSink } from '../store/sink.js';
import type { StoreSink } from '../analytics/store-sink.js';
import { dashboardQueries } from '../dashboard/dashboard-queries.js';
import { runOnStore, type DashboardQueries } from '../dashboard/dashboard-query.js';

export interface StoreHolderApiOptions {
  /** The secret every replica sends (COLLECTOR_TOKEN); at least 32 characters. */
  token: string;
  /** Where the replicas' items go: the store this process holds, or the relay to Azure (and its copy). */
  sink: ItemSink;
  /**
   * The store whose queries the replicas ask for (its usage and annotation queries, and the panels'
   * registered queries by their names); without one, every query is 404.
   */
  queries?: Pick<StoreSink, 'usage' | 'store'> & Partial<Pick<StoreSink, 'annotations'>>;
  /** The panels' queries it answers: default the registry (dashboard/dashboard-queries.ts). */
  dashboardQueries?: DashboardQueries;
  /** Largest append body, in bytes. Default 64 MiB: a replica's whole request, packed, with room to spare. */
  maxAppendBytes?: number;
  /** Seconds a replica is told to wait (it passes them on to the SDKs) when the store is busy. Default 10. */
  retryAfterSeconds?: number;
  log: Logger;
}

/** A query's arguments: a few options, never a body of size. */
const MAX_QUERY_BYTES = 64 * 1024;
/** How often refused requests (no or a wrong token) are logged, with how many there were. */
const LOG_INTERVAL_MS = 10_000;

/**
 * The store holder's internal API (docs/decisions/0041), for the replicas that forward to it:
 * appending packed items and answering the usage queries. Every request under /internal/ needs the
 * shared token; nothing of it is cached, and no answer says more than a status to a caller without it.
 * Returns an Express-style handler that calls `next()` for paths outside /internal/.
 */
export function createStoreHolderApi(options: StoreHolderApiOptions) {
  const { token, sink, queries: source, log } = options;
  if (token.length < MIN_TOKEN_LENGTH)
    throw new RangeError(`The collector token must be at least ${MIN_TOKEN_LENGTH} characters long.`);
  const maxAppendBytes = options.maxAppendBytes ?? 64 * 1024 * 1024;
  const retryAfter = String(options.retryAfterSeconds ?? 10);
  /** Each query by its name, and whether it is answered as a stream of lines. */
  const queries = new Map<string, { run: (...args: unknown[]) => unknown; stream: boolean }>();
  function offer(group: object | undefined, names: Record<string, string>) {
    if (!group) return;
    const methods = group as Record<string, (...args: unknown[]) => unknown>;
    for (const [name, answer] of Object.entries(names)) {
      const method = methods[name];
      if (method) queries.set(name, { run: method.bind(group), stream: answer === 'ndjson' });
    }
  }
  if (source) {
    offer(source.usage, REMOTE_QUERIES.usage);
    offer(source.annotations, REMOTE_QUERIES.annotations);
    const registry: DashboardQueries = options.dashboardQueries ?? dashboardQueries;
    const dashboard = runOnStore(registry, source.store);
    for (const name of Object.keys(registry))
      queries.set(name, { run: (query) => dashboard(name, query as never), stream: false });
  }

  let refused = 0;
  let lastRefusalLog = -Infinity;
  function logRefusal(req: IncomingMessage): void {
    refused++;
    if (Date.now() - lastRefusalLog < LOG_INTERVAL_MS) return;
    log(
      'warn',
      `internal API: refused ${refused} request(s) without the collector token (last from ${req.socket.remoteAddress})`,
    );
    refused = 0;
    lastRefusalLog = Date.now();
  }

  function answer(res: ServerResponse, status: number, body?: unknown, headers: Record<string, string> = {}) {
    const json = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, {
      ...headers,
      'Cache-Control': 'no-store',
      ...(json ? { 'Content-Type': 'application/json; charset=utf-8' } : {}),
      'Content-Length': Buffer.byteLength(json),
    });
    res.end(json);
  }

  async function append(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.headers['content-type'] !== PACKED_TYPE) {
      req.resume();
      return answer(res, 415, { error: `Content-Type must be ${PACKED_TYPE}.` });
    }
    const full = sink.full();
    if (full !== undefined) {
      req.resume();
      return answer(res, 507, { error: `The store is full: ${full}.` });
    }
    const items = decodePacked(await readBody(req, maxAppendBytes));
    if (!sink.hasRoom(items.count))
      return answer(res, 503, { error: 'The store is busy.' }, { 'Retry-After': retryAfter });
    try {
      await sink.append(items);
    } catch (error) {
      log('error', `store write failed (items forwarded by a replica): ${String(error)}`);
      return answer(res, 503, { error: 'The store could not write.' }, { 'Retry-After': retryAfter });
    }
    answer(res, 200, { stored: items.count });
  }

  async function query(name: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    const asked = queries.get(name);
    if (!asked) {
      req.resume();
      return answer(res, 404, { error: 'No such query.' });
    }
    let args: unknown;
    try {
      args = JSON.parse((await readBody(req, MAX_QUERY_BYTES)).toString('utf8'));
    } catch (error) {
      if (error instanceof BodyError) throw error;
      args = undefined;
    }
    if (!Array.isArray(args))
      return answer(res, 400, { error: 'The body must be a JSON array of arguments.' });
    const list = args as unknown[];
    if (!asked.stream) return answer(res, 200, { result: (await asked.run(...list)) ?? null });
    // One user's items, streamed as NDJSON: a store holder that fails half way cuts the answer, so the
    // replica never takes a partial export for a whole one.
    res.writeHead(200, { 'Cache-Control': 'no-store', 'Content-Type': 'application/x-ndjson' });
    let chunk = '';
    for await (const envelope of asked.run(...list) as AsyncIterable<unknown>) {
      chunk += `${JSON.stringify(envelope)}\n`;
      if (chunk.length > 65_536) {
        if (!res.write(chunk)) await once(res, 'drain');
        chunk = '';
      }
    }
    res.end(chunk);
  }

  async function serve(path: string, req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (req.method === 'GET' && path === PING_PATH) return answer(res, 204);
    if (req.method !== 'POST') {
      req.resume();
      return answer(res, 405, { error: 'Method not allowed.' }, { Allow: 'POST' });
    }
    if (path === APPEND_PATH) return append(req, res);
    if (path.startsWith(QUERY_PREFIX)) return query(path.slice(QUERY_PREFIX.length), req, res);
    req.resume();
    answer(res, 404, { error: 'Not found.' });
  }

  return (req: IncomingMessage, res: ServerResponse, next?: () => void): void => {
    const path = (req.url ?? '').split('?', 1)[0] ?? '';
    if (!path.startsWith(INTERNAL_PREFIX)) {
      if (next) next();
      else answer(res, 404);
      return;
    }
    if (!holdsToken(req.headers.authorization, token)) {
      logRefusal(req);
      req.resume();
      answer(res, 401, undefined, { 'WWW-Authenticate': 'Bearer' });
      return;
    }
    serve(path, req, res).catch((error: unknown) => {
      if (error instanceof BodyError || error instanceof PackedFormatError) {
        const status = error instanceof BodyError ? error.statusCode : 400;
        if (!res.headersSent)
          answer(res, status, { error: error.message }, status === 413 ? { Connection: 'close' } : {});
        req.resume();
        return;
      }
      log('error', `internal API: ${path} failed: ${String(error)}`);
      if (!res.headersSent) answer(res, 500, { error: 'The store holder failed.' });
      else res.destroy();
    });
  };
}

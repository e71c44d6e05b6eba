import type { Server, ServerOptions } from 'node:http';

/**
 * Limits on the HTTP server that hosts the collector (Gatehouse's own server), so a slow or flooding
 * client cannot hold connections open: Node's defaults wait 300 s for a request and take any number of
 * connections.
 */
export interface HttpLimits {
  /** Time to receive a whole request, headers and body (Node's `server.requestTimeout`); then 408. */
  requestTimeoutMs: number;
  /** Time to receive the headers (Node's `server.headersTimeout`); then 408. */
  headersTimeoutMs: number;
  /** Idle time of a kept-alive connection between requests (Node's `server.keepAliveTimeout`). */
  keepAliveTimeoutMs: number;
  /** Open connections at once (Node's `server.maxConnections`); more are closed as they arrive. */
  maxConnections: number;
}

export const defaultHttpLimits: HttpLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  // The SDKs send a batch every few seconds (browser 15 s, Node.js 15 s) over kept-alive connections.
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
};

/**
 * The options `http.createServer` / `https.createServer` take for these limits. Node checks the
 * timeouts every `connectionsCheckingInterval` (30 s by default, which would let a slow client stay
 * that much longer), so it is a fraction of the shortest timeout here.
 */
export function httpServerOptions(limits: HttpLimits = defaultHttpLimits): ServerOptions {
  return {
    requestTimeout: limits.requestTimeoutMs,
    headersTimeout: Math.min(limits.headersTimeoutMs, limits.requestTimeoutMs),
    connectionsCheckingInterval: Math.max(50, Math.min(1_000, limits.headersTimeoutMs / 4)),
  };
}

/** Sets the limits that are properties of a created server (call with the server httpServerOptions made). */
export function limitServer(server: Server, limits: HttpLimits = defaultHttpLimits): void {
  server.keepAliveTimeout = limits.keepAliveTimeoutMs;
  server.maxConnections = limits.maxConnections;
}

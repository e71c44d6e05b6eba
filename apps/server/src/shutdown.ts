import type { ServerResponse } from 'node:http';
import type { GatehouseServer } from './listen.js';

export interface DrainResult {
  /** Requests still unanswered when the time ran out, whose connections were cut. */
  cut: number;
}

export interface Drainer {
  /**
   * Stops taking connections, lets the requests in flight finish (each connection closes after its
   * answer instead of idling for the next request), and after `timeoutMs` cuts what is left. Resolves
   * once every connection is closed.
   */
  drain(timeoutMs: number): Promise<DrainResult>;
  /** Cuts every connection now (a second Ctrl-C). */
  cut(): void;
  /** Requests being answered now. */
  readonly inFlight: number;
}

/**
 * Follows `server`'s requests so that a shutdown can wait for them. Call right after `listen`, before
 * the first request; a load balancer's keep-alive connection must not outlive the process's last answer
 * (the balancer would send its next request into a closed socket), so every answer given while
 * draining says `Connection: close`.
 */
export function trackRequests(server: GatehouseServer): Drainer {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  server.on('request', (_req, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    inFlight.add(res);
    res.once('close', () => {
      inFlight.delete(res);
      // An answer whose headers were already out when draining began kept its connection open.
      if (draining) server.closeIdleConnections();
    });
  });

  return {
    get inFlight() {
      return inFlight.size;
    },
    cut() {
      server.closeAllConnections();
    },
    drain(timeoutMs) {
      draining = true;
      for (const res of inFlight) if (!res.headersSent) res.setHeader('Connection', 'close');
      return new Promise((resolve) => {
        let cut = 0;
        const timer = setTimeout(() => {
          cut = inFlight.size;
          server.closeAllConnections();
        }, timeoutMs);
        // close() stops the listener and closes idle keep-alive connections; busy ones end after
        // their answer (Connection: close above), and the callback runs when the last one has.
        server.close(() => {
          clearTimeout(timer);
          resolve({ cut });
        });
        server.closeIdleConnections();
      });
    },
  };
}

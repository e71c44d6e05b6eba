import { createServer, request as forward, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the browser sent it, and the status it got. */
export interface SeenRequest {
  method: string;
  /** Path and query, e.g. `/api/me`. */
  path: string;
  headers: IncomingHttpHeaders;
  status: number | undefined;
  /** The answer's headers, once it came. */
  answerHeaders: IncomingHttpHeaders | undefined;
}

export interface RecordingProxy {
  /** The proxy's origin, which the app must name as its public origin (PUBLIC_ORIGIN). */
  origin: string;
  /** Every request so far, oldest first. */
  seen: SeenRequest[];
  /** Points the proxy at the app (started after the proxy, since the app must know its public origin). */
  target(origin: string): void;
  close(): Promise<void>;
}

/**
 * A proxy in front of the app that records what every browser engine sent it, whoever sent it: a page,
 * a dedicated or a shared worker (the token vault's API calls, which no browser driver reports). It
 * passes requests and answers through unchanged.
 */
export async function recordingProxy(): Promise<RecordingProxy> {
  const seen: SeenRequest[] = [];
  let upstream: URL | undefined;
  const server = createServer((req, res) => {
    const entry: SeenRequest = {
      method: req.method ?? 'GET',
      path: req.url ?? '/',
      headers: req.headers,
      status: undefined,
      answerHeaders: undefined,
    };
    seen.push(entry);
    if (!upstream) {
      res.writeHead(503).end('the proxy has no target yet');
      return;
    }
    const outgoing = forward(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: entry.method,
        path: entry.path,
        headers: req.headers,
      },
      (answer) => {
        entry.status = answer.statusCode;
        entry.answerHeaders = answer.headers;
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    outgoing.on('error', () => res.writeHead(502).end());
    req.pipe(outgoing);
  });
  await new Promise<void>((resolve) => server.listen(0, 'localhost', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://localhost:${port}`,
    seen,
    target: (origin) => (upstream = new URL(origin)),
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Starts a collector on 127.0.0.1 (a free port) over a temp data dir, for tests. */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCollector, type Collector, type CollectorOptions } from '../http/collector.js';
import type { LogLevel } from '../logger.js';
import { defaultHttpLimits, httpServerOptions, limitServer, type HttpLimits } from '../http/http-limits.js';
import { BROWSER_IKEY, browserRequest } from './browser-envelopes.js';

export interface TestCollector {
  /** http://127.0.0.1:port, or https:// when started with `tls` */
  origin: string;
  collector: Collector;
  dataDir: string;
  server: http.Server | https.Server;
  /** What the collector logged. */
  logs: [LogLevel, string][];
  /** Stops the server and the collector; removes the data dir unless `keepData`. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export function tempDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'gatehouse-collector-test-'));
}

/**
 * `http`: the server's limits, as Gatehouse's server sets them (default: the defaults). With `tls`, the
 * collector is served over https with that certificate and key.
 */
export async function startTestCollector(
  options: Partial<CollectorOptions> = {},
  httpLimits: Partial<HttpLimits> = {},
  tls?: { cert: Buffer; key: Buffer },
): Promise<TestCollector> {
  const dataDir = options.dataDir ?? tempDataDir();
  const logs: [LogLevel, string][] = [];
  const collector = await createCollector({
    instrumentationKeys: [BROWSER_IKEY],
    allowedOrigins: ['https://app.example'],
    ...options,
    dataDir,
    log: (level, message) => logs.push([level, message]),
  });
  const limits = { ...defaultHttpLimits, ...httpLimits };
  const listener: http.RequestListener = (req, res) =>
    collector.handle(req, res, () => {
      res.writeHead(404);
      res.end('next');
    });
  const options_ = httpServerOptions(limits);
  const server = tls
    ? https.createServer({ ...options_, ...tls }, listener)
    : http.createServer(options_, listener);
  limitServer(server, limits);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `${tls ? 'https' : 'http'}://127.0.0.1:${port}`,
    collector,
    dataDir,
    server,
    logs,
    async close({ keepData = false } = {}) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await collector.close();
      if (!keepData) rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** Posts envelopes as the browser SDK would from a browser of this User-Agent; the collector's answer. */
export async function postAs(origin: string, userAgent: string, envelopes: object[]): Promise<unknown> {
  const { body, headers } = browserRequest(envelopes);
  const response = await fetch(`${origin}/v2/track`, {
    method: 'POST',
    body,
    headers: { ...headers, 'user-agent': userAgent },
  });
  return response.json();
}

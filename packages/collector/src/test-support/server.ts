/** Starts a collector on 127.0.0.1 (a free port) over a temp data dir, for tests. */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createCollector, type Collector, type CollectorOptions, type LogLevel } from '../collector.js';
import { defaultHttpLimits, httpServerOptions, limitServer, type HttpLimits } from '../http-limits.js';
import { BROWSER_IKEY } from './browser-envelopes.js';

export interface TestCollector {
  /** http://127.0.0.1:port */
  origin: string;
  collector: Collector;
  dataDir: string;
  server: Server;
  /** What the collector logged. */
  logs: [LogLevel, string][];
  /** Stops the server and the collector; removes the data dir unless `keepData`. */
  close(options?: { keepData?: boolean }): Promise<void>;
}

export function tempDataDir(): string {
  return mkdtempSync(path.join(tmpdir(), 'gatehouse-collector-test-'));
}

/** `http`: the server's limits, as Gatehouse's server sets them (default: the defaults). */
export async function startTestCollector(
  options: Partial<CollectorOptions> = {},
  http: Partial<HttpLimits> = {},
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
  const limits = { ...defaultHttpLimits, ...http };
  const server = createServer(httpServerOptions(limits), (req, res) =>
    collector.handle(req, res, () => {
      res.writeHead(404);
      res.end('next');
    }),
  );
  limitServer(server, limits);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
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

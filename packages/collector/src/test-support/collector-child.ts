/**
 * A collector in a process of its own, for the SIGKILL and memory tests:
 * `node collector-child.js <dataDir> [<options as JSON>]`, served with the HTTP server limits Gatehouse
 * sets. Prints `{"port":N}` on its first line of output once it listens on 127.0.0.1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCollector, type CollectorOptions } from '../http/collector.js';
import { httpServerOptions, limitServer } from '../http/http-limits.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: collector-child <dataDir> [<options as JSON>]');
const options = JSON.parse(process.argv[3] ?? '{}') as Partial<CollectorOptions>;
const collector = await createCollector({
  instrumentationKeys: 'any',
  allowedOrigins: [],
  ...options,
  dataDir,
  log: (level, message) => process.stderr.write(`[${level}] ${message}\n`),
});
const server = http.createServer(httpServerOptions(), (req, res) => collector.handle(req, res));
limitServer(server);
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});

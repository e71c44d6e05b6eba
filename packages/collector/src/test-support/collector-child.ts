/**
 * A collector in a process of its own, for the SIGKILL test: `node collector-child.js <dataDir>`.
 * Prints `{"port":N}` on its first line of output once it listens on 127.0.0.1.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCollector } from '../collector.js';

const dataDir = process.argv[2];
if (!dataDir) throw new Error('usage: collector-child <dataDir>');
const collector = await createCollector({
  dataDir,
  instrumentationKeys: 'any',
  allowedOrigins: [],
  log: (level, message) => process.stderr.write(`[${level}] ${message}\n`),
});
const server = http.createServer((req, res) => collector.handle(req, res));
server.listen(0, '127.0.0.1', () => {
  process.stdout.write(`${JSON.stringify({ port: (server.address() as AddressInfo).port })}\n`);
});

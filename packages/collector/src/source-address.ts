import type { IncomingMessage } from 'node:http';

/**
 * The client's address, for per-source limits: behind `hops` trusted proxies (each adding one
 * `X-Forwarded-For` entry), the entry `hops` places from the right, the one the outermost of them
 * added (the entries before it are the client's to write, so a limit keyed on them could be dodged);
 * the left-most when there are fewer entries; else the connection's address. This is what Express
 * makes `req.ip` with `trust proxy` set to the same count (apps/server/src/proxy-trust.ts).
 */
export function clientAddress(req: IncomingMessage, hops: number): string {
  const connection = req.socket.remoteAddress ?? '';
  if (hops <= 0) return connection;
  // Node joins repeated X-Forwarded-For headers with ', '.
  const entries = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries[Math.max(0, entries.length - hops)] ?? connection;
}

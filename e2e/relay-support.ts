import { once } from 'node:events';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gunzipSync, gzipSync } from 'node:zlib';
import { createCollector, type Collector } from '@gatehouse/collector';

/** What the proxy does with the relay's next requests. */
export type Mode = 'pass' | 'refuse' | 'throttle' | 'partial';

/** Statuses the proxy names in a 206 for the items it holds back: each one the protocol says to resend. */
const RETRYABLE = [429, 500, 503, 408, 439];

/** An envelope's identity across the relay: its JSON without the instrumentation key (the relay sets that). */
export function identity(envelope: Record<string, unknown>): string {
  const { iKey: _iKey, ...rest } = envelope;
  return JSON.stringify(rest);
}

interface BreezeAnswer {
  itemsReceived: number;
  itemsAccepted: number;
  errors: { index: number; statusCode: number; message: string }[];
}

/**
 * Azure's ingestion endpoint played by a second Gatehouse collector (a real createCollector with its
 * own store, speaking the same protocol), behind a loopback proxy that can refuse (503, 500), throttle
 * (429 with Retry-After), take only part of a batch (206 naming the rest with retryable statuses), or
 * go away (stop listening) for a while. The proxy counts, per item, how often the destination took it.
 */
export async function startAzureStandIn(iKey: string) {
  const dataDir = mkdtempSync(join(tmpdir(), 'gatehouse-azure-'));
  const destination: Collector = await createCollector({
    dataDir,
    instrumentationKeys: [iKey],
    allowedOrigins: [],
    retentionDays: 0,
    log: () => undefined,
  });
  const destinationServer = http.createServer((req, res) => destination.handle(req, res));
  destinationServer.listen(0, '127.0.0.1');
  await once(destinationServer, 'listening');
  const destinationUrl = `http://127.0.0.1:${(destinationServer.address() as AddressInfo).port}/v2.1/track`;

  /** How often the destination took each item (by identity). */
  const taken = new Map<string, number>();
  const applied: Record<Mode | 'away', number> = { pass: 0, refuse: 0, throttle: 0, partial: 0, away: 0 };
  let mode: Mode = 'pass';
  let waiters: (() => void)[] = [];
  const changed = () => {
    for (const wake of waiters.splice(0)) wake();
  };

  async function forward(lines: string[]): Promise<BreezeAnswer> {
    const response = await fetch(destinationUrl, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-json-stream', 'Content-Encoding': 'gzip' },
      body: gzipSync(lines.join('\n')),
    });
    const answer = (await response.json()) as BreezeAnswer;
    if (response.status !== 200 && response.status !== 206) {
      throw new Error(`The destination answered ${response.status}: ${JSON.stringify(answer)}`);
    }
    const refused = new Set(answer.errors.map((e) => e.index));
    lines.forEach((line, index) => {
      if (refused.has(index)) return;
      const key = identity(JSON.parse(line) as Record<string, unknown>);
      taken.set(key, (taken.get(key) ?? 0) + 1);
    });
    return answer;
  }

  const send = (res: http.ServerResponse, status: number, body: unknown, headers = {}) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      void (async () => {
        const body = Buffer.concat(chunks);
        const text = (req.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8');
        const lines = text.split('\n').filter(Boolean);
        const current = mode;
        applied[current]++;
        if (current === 'refuse') {
          return send(res, applied.refuse % 2 ? 503 : 500, {
            itemsReceived: lines.length,
            itemsAccepted: 0,
            errors: [],
          });
        }
        if (current === 'throttle') {
          return send(
            res,
            429,
            { itemsReceived: lines.length, itemsAccepted: 0, errors: [] },
            { 'Retry-After': '1' },
          );
        }
        if (current === 'partial' && lines.length > 1) {
          // Every other item is held back, named with a retryable status; the rest go on.
          const kept = lines.filter((_l, i) => i % 2 === 0);
          const answer = await forward(kept);
          const errors = lines
            .map((_l, index) => index)
            .filter((index) => index % 2 === 1)
            .map((index, n) => ({
              index,
              statusCode: RETRYABLE[n % RETRYABLE.length] ?? 503,
              message: 'held back by the test',
            }));
          for (const e of answer.errors) errors.push({ ...e, index: e.index * 2 });
          return send(res, 206, {
            itemsReceived: lines.length,
            itemsAccepted: lines.length - errors.length,
            errors: errors.sort((a, b) => a.index - b.index),
          });
        }
        const answer = await forward(lines);
        send(res, answer.errors.length ? 206 : 200, answer);
      })()
        .catch((error: unknown) => send(res, 500, { error: String(error) }))
        .finally(changed);
    });
  });
  proxy.listen(0, '127.0.0.1');
  await once(proxy, 'listening');
  const port = (proxy.address() as AddressInfo).port;

  return {
    /** The connection string's IngestionEndpoint. */
    endpoint: `http://127.0.0.1:${port}/`,
    taken,
    applied,
    setMode(next: Mode) {
      mode = next;
    },
    /** Resolves once the proxy has dealt with `count` requests in `which` mode. */
    async handled(which: Mode, count: number) {
      while (applied[which] < count) await new Promise<void>((resolve) => waiters.push(resolve));
      waiters = waiters.filter(Boolean);
    },
    /** Stops listening (connections refused) for `ms`, then listens again on the same port. */
    async goAway(ms: number) {
      applied.away++;
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await new Promise((resolve) => setTimeout(resolve, ms));
      proxy.listen(port, '127.0.0.1');
      await once(proxy, 'listening');
    },
    /** Items the destination's store holds. */
    stored: () => destination.store.count(),
    async close() {
      proxy.closeAllConnections();
      destinationServer.closeAllConnections();
      await Promise.all([
        new Promise((resolve) => proxy.close(resolve)),
        new Promise((resolve) => destinationServer.close(resolve)),
      ]);
      await destination.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

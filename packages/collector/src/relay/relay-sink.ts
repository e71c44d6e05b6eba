import path from 'node:path';
import type { Logger } from '../logger.js';
import { SinkUnavailable, type ItemSink } from '../store/sink.js';
import { ingestionTarget } from '@gatehouse/config';
import { relayItems } from './envelopes.js';
import { Forwarder, type ForwarderOptions, type RelayStats } from './forwarder.js';
import { Outbox, OutboxFull } from './outbox.js';

/**
 * The relay as the collector's sink (docs/decisions/0041): what the front accepted goes to an on-disk
 * outbox, durable before the sender is answered, and from there to the connection string's ingestion
 * endpoint (forwarder.ts).
 */
export interface RelaySink extends ItemSink {
  /** What the forwarding has done so far. */
  stats(): RelayStats & { pending: number; outboxBytes: number };
}

export interface RelaySinkOptions extends Omit<ForwarderOptions, 'trackUrl' | 'log'> {
  /** The Azure Monitor connection string: the only source of the destination and its key. */
  connectionString: string;
  /** The data folder; the outbox is its `relay-outbox` folder. */
  dataDir: string;
  /** Bytes the outbox may hold; past it the collector answers 503 (senders keep their items). */
  maxBytes: number;
  log: Logger;
}

/** How often "the outbox is full" is said. */
const FULL_LOG_INTERVAL_MS = 10_000;

export async function openRelaySink(options: RelaySinkOptions): Promise<RelaySink> {
  const target = ingestionTarget(options.connectionString);
  const outbox = await Outbox.open(path.join(options.dataDir, 'relay-outbox'), {
    maxBytes: options.maxBytes,
    warn: (message) => options.log('warn', message),
  });
  const forwarder = new Forwarder(outbox, { ...options, trackUrl: target.trackUrl });
  let lastFullLog = -Infinity;
  if (outbox.pending > 0) {
    options.log('info', `relay: ${outbox.pending} items from before the start are waiting to be forwarded`);
  }
  const sayFull = () => {
    if (Date.now() - lastFullLog <= FULL_LOG_INTERVAL_MS) return;
    lastFullLog = Date.now();
    options.log(
      'error',
      `relay: the outbox is full (${outbox.bytes} bytes, TELEMETRY_RELAY_MAX_MB allows ${options.maxBytes}); ` +
        `senders are answered 503 until the ingestion endpoint takes what is waiting (${forwarder.stats.lastError ?? 'no error so far'})`,
    );
  };
  return {
    async append(items) {
      try {
        await outbox.append(relayItems(items, target.iKey));
      } catch (error) {
        if (!(error instanceof OutboxFull)) throw error;
        sayFull();
        throw new SinkUnavailable('the relay outbox is full', undefined, { cause: error });
      }
    },
    hasRoom(count) {
      if (outbox.hasRoom(count)) return true;
      sayFull();
      return false;
    },
    backlog: () => outbox.pending,
    full: () => undefined,
    async close() {
      await forwarder.stop();
      await outbox.close();
    },
    stats: () => ({ ...forwarder.stats, pending: outbox.pending, outboxBytes: outbox.bytes }),
  };
}

/** A sink that appends to `first`, then `second` (the relay, then the local copy), answering once both hold the items. */
export function teeSink(first: ItemSink, second: ItemSink): ItemSink {
  return {
    // In turn, not at once: if the first fails, nothing went to the second; if the second fails, the
    // sender resends, and the first (which de-duplicates by item identity) takes nothing twice.
    async append(items) {
      await first.append(items);
      await second.append(items);
    },
    hasRoom: (count) => first.hasRoom(count) && second.hasRoom(count),
    backlog: () => Math.max(first.backlog(), second.backlog()),
    full: () => first.full() ?? second.full(),
    async ready() {
      return ((await first.ready?.()) ?? true) && ((await second.ready?.()) ?? true);
    },
    async close() {
      await Promise.all([first.close(), second.close()]);
    },
  };
}

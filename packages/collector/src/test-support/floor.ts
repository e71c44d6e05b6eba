import type { IncomingMessage, ServerResponse } from 'node:http';
import { bodyRefused, send } from '../http/breeze-answers.js';
import { inflate, readBody, splitItems } from '../protocol/body.js';
import { itemKey } from '../protocol/item-identity.js';
import { RS } from '../protocol/packed.js';
import { GroupCommit } from '../store/group-commit.js';
import { Journal } from '../store/journal.js';

/**
 * What a request may hold, read or inflated: above the collector's own caps (1 MiB read, 4 MiB inflated),
 * so the floor refuses nothing the collector would take.
 */
const MAX_BODY_BYTES = 64 * 1024 * 1024;

/** An ingestion endpoint that does the least any durable one must (openFloor). */
export interface Floor {
  handle(req: IncomingMessage, res: ServerResponse): void;
  /** Items answered as stored. */
  readonly stored: number;
  close(): Promise<void>;
}

/**
 * The floor of ingestion, for the collector bench: what storing an item durably costs at the least, with
 * the collector's own parts. It reads each request's body (inflated where it is gzip), splits it into
 * items, hashes each item's text (its identity, as the collector keys it), appends the texts to a journal
 * in `dir` (requests read together share one write and one fdatasync, as the collector's do) and answers
 * once they are on disk. Nothing else: no validation, no duplicate check, no rows, no DuckDB. The bench
 * sends it the same load as the collector and prints the collector's rate as a share of this one.
 */
export async function openFloor(dir: string): Promise<Floor> {
  const journal = await Journal.open(dir, { segment: 0, offset: 0 }, () => undefined);
  const commit = new GroupCommit<string>((runs) => journal.append(runs), Number.POSITIVE_INFINITY, 1);
  let stored = 0;
  const store = async (req: IncomingMessage): Promise<{ received: number; accepted: number }> => {
    const raw = await readBody(req, MAX_BODY_BYTES);
    const body = await inflate(raw, req.headers['content-encoding'], MAX_BODY_BYTES);
    const items = splitItems(body.toString('utf8'), req.headers['content-type']);
    let rows = '';
    let accepted = 0;
    for (const item of items) {
      if (!item.ok) continue;
      const text = item.source?.text ?? JSON.stringify(item.value);
      itemKey(text);
      rows += `${text}${RS}`;
      accepted++;
    }
    if (accepted > 0) await commit.add(rows, accepted);
    stored += accepted;
    return { received: items.length, accepted };
  };
  return {
    handle(req, res) {
      store(req).then(
        ({ received, accepted }) =>
          send(res, 200, { itemsReceived: received, itemsAccepted: accepted, errors: [] }),
        (error: unknown) => send(res, 400, bodyRefused(400, `not stored: ${String(error)}`)),
      );
    },
    get stored() {
      return stored;
    },
    close: async () => {
      await commit.drain();
      await journal.close();
    },
  };
}

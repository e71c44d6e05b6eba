import { hash } from 'node:crypto';

/*
 * Which items are the same item. The browser SDK serialises each envelope once, keeps that text in its
 * session buffer, and sends the same text again when it retries, when the page hides (a beacon) and when
 * the next page resends what it never saw acknowledged; the Node.js SDK resends the same payload from
 * disk. So an item's identity is its envelope's text: the envelope already carries everything the SDK
 * makes unique (its time to the millisecond, the session, user and operation ids, and `baseData.id` for
 * page views, dependencies and requests), and two items with the same text cannot be told apart anyway.
 * See docs/decisions/0015-store-each-item-once.md.
 */

/** Hex digits of the SHA-256 kept as the key: 52 bits, so it is a plain JS number (exact below 2^53). */
const KEY_HEX_DIGITS = 13;

/** The identity of an envelope, from the text the store keeps for it. */
export function itemKey(envelope: string): number {
  return parseInt(hash('sha256', envelope, 'hex').slice(0, KEY_HEX_DIGITS), 16);
}

/** The same key computed by DuckDB from the stored `envelope` column (hex; parse it with parseInt). */
export const ITEM_KEY_SQL = `left(sha256(envelope), ${KEY_HEX_DIGITS})`;

/**
 * The keys of the items stored most recently, at most `capacity` of them: two generations of sets, the
 * older dropped whole when the newer fills, so memory stays bounded and each look-up is two hashes.
 */
export class RecentKeys {
  private current = new Set<number>();
  private previous = new Set<number>();

  constructor(readonly capacity: number) {}

  has(key: number): boolean {
    return this.current.has(key) || this.previous.has(key);
  }

  add(key: number): void {
    if (this.current.size >= Math.ceil(this.capacity / 2)) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(key);
  }

  delete(key: number): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  get size(): number {
    return this.current.size + this.previous.size;
  }
}

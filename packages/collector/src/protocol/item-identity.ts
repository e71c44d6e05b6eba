import { hash } from 'node:crypto';

/*
 * Which items are the same item. The browser SDK serialises each envelope once, keeps that text in its
 * session buffer, and sends the same text again when it retries, when the page hides (a beacon) and when
 * the next page resends what it never saw acknowledged; the Node.js SDK resends the same payload from
 * disk. So an item's identity is its envelope's text: the envelope already carries everything the SDK
 * makes unique (its time to the millisecond, the session, user and operation ids, and `baseData.id` for
 * page views, dependencies and requests), and two items with the same text cannot be told apart anyway.
 * See docs/decisions/0015-collector-store-integrity.md.
 */

/** Hex digits of the SHA-256 kept as the key: 52 bits, so it is a plain JS number (exact below 2^53). */
const KEY_HEX_DIGITS = 13;

/** The identity of an envelope, from the text the store keeps for it: the digest's first 52 bits. */
export function itemKey(envelope: string): number {
  // Read from the digest's bytes: a hex string sliced and parsed cost ~0.5 µs more an item.
  const digest = hash('sha256', envelope, 'buffer');
  return digest.readUIntBE(0, 6) * 16 + ((digest[6] ?? 0) >> 4);
}

/** The same key computed by DuckDB from the stored `envelope` column (hex; parse it with parseInt). */
export const ITEM_KEY_SQL = `left(sha256(envelope), ${KEY_HEX_DIGITS})`;

/** An open-addressed set of keys in one Float64Array: 0 is a free slot, -1 a deleted one, else key + 1. */
class KeyTable {
  private readonly slots: Float64Array;
  private readonly mask: number;
  /** Slots taken, deleted ones included (they still lengthen probes until the table is cleared). */
  filled = 0;
  live = 0;

  constructor(entries: number) {
    // At most half full, so probes stay short; a power of two, so the slot is the key's low bits.
    let size = 4;
    while (size < entries * 2) size *= 2;
    this.slots = new Float64Array(size);
    this.mask = size - 1;
  }

  /** The slot holding `key`, or -1. Keys are uniform hashes, so their low 32 bits (`& mask`) spread. */
  private find(key: number): number {
    const stored = key + 1;
    for (let at = key & this.mask; ; at = (at + 1) & this.mask) {
      const slot = this.slots[at];
      if (slot === stored) return at;
      if (slot === 0) return -1;
    }
  }

  has(key: number): boolean {
    return this.find(key) >= 0;
  }

  add(key: number): void {
    if (this.has(key)) return;
    let at = key & this.mask;
    while (this.slots[at] !== 0) at = (at + 1) & this.mask;
    this.slots[at] = key + 1;
    this.filled++;
    this.live++;
  }

  delete(key: number): void {
    const at = this.find(key);
    if (at < 0) return;
    this.slots[at] = -1;
    this.live--;
  }

  clear(): void {
    this.slots.fill(0);
    this.filled = 0;
    this.live = 0;
  }
}

/**
 * The keys of the items stored most recently, at most `capacity` of them: two generations of tables,
 * the older dropped whole when the newer fills, so memory stays bounded and each look-up is two probes.
 * Typed arrays rather than Sets: 500,000 keys above 2^31 were as many heap numbers for every major GC
 * to trace, and a Set's look-ups cost more than a probe here.
 *
 * Each key comes with its item's event time, and the table says up to which event time it may have
 * let keys go (`forgottenUpTo`): a copy has its original's text, so its time too, and a key dated
 * after that time is known here or was never added.
 */
export class RecentKeys {
  private current: KeyTable;
  private previous: KeyTable;
  /** The latest event time of the keys in each generation. */
  private currentLatest = -Infinity;
  private previousLatest = -Infinity;
  private readonly half: number;
  /** The latest event time of any key dropped (or never added: `forget`); -Infinity while none was. */
  forgottenUpTo = -Infinity;
  /** How many times keys were let go: a reader that waited can tell whether `forgottenUpTo` moved. */
  drops = 0;

  constructor(readonly capacity: number) {
    this.half = Math.max(1, Math.ceil(capacity / 2));
    this.current = new KeyTable(this.half);
    this.previous = new KeyTable(this.half);
  }

  has(key: number): boolean {
    return this.current.has(key) || this.previous.has(key);
  }

  /** `time`: the item's event time (epoch ms); unknown, any copy of it is taken as possibly forgotten. */
  add(key: number, time = Infinity): void {
    if (this.current.filled >= this.half) {
      if (this.previous.live > 0) this.forget(this.previousLatest);
      const emptied = this.previous;
      emptied.clear();
      this.previous = this.current;
      this.previousLatest = this.currentLatest;
      this.current = emptied;
      this.currentLatest = -Infinity;
    }
    this.current.add(key);
    if (time > this.currentLatest) this.currentLatest = time;
  }

  delete(key: number): void {
    this.current.delete(key);
    this.previous.delete(key);
  }

  /** Says that keys of items dated up to `time` may be missing (those stored before it was filled). */
  forget(time: number): void {
    if (time > this.forgottenUpTo) this.forgottenUpTo = time;
    this.drops++;
  }

  /** Whether keys may be missing of items dated `time`: only then is a key's absence not an answer. */
  mayHaveForgotten(time: number): boolean {
    return time <= this.forgottenUpTo;
  }

  get size(): number {
    return this.current.live + this.previous.live;
  }
}

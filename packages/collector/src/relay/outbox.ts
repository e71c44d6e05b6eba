import { mkdirSync, readdirSync } from 'node:fs';
import { open, readFile, rename, rm, stat, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { GroupCommit } from '../store/group-commit.js';
import { RecentKeys } from '../protocol/item-identity.js';
import type { RelayItem } from './envelopes.js';

/**
 * The relay's outbox: what the collector accepted and Azure has not acknowledged yet, on disk.
 *
 * Items get a sequence number in order of arrival. A segment file (`outbox-<first seq>.log`) holds
 * appends, each a run of lines `<key in base 36> <envelope>\n` closed by a trailer line
 * `#<bytes>:<crc32>\n`; an append is fdatasync'ed before it resolves (before the browser's answer). A
 * crash can leave the last append incomplete: it was never answered, and opening cuts it off.
 * `acked.log` lists the sequence numbers the endpoint has settled (taken, or refused for good), as
 * `from-to` lines, fdatasync'ed after each answer; a segment whose items are all settled is deleted.
 * An item is removed only after the endpoint answered for it: at least once. It is sent again, and may
 * arrive twice, when the answer is lost (a time-out, a reset) or the process dies before its
 * `acked.log` line (docs/decisions/0048).
 */
const SEGMENT = /^outbox-(\d{15})\.log$/;
const segmentName = (first: number) => `outbox-${String(first).padStart(15, '0')}.log`;
const ACKS = 'acked.log';
const TRAILER = /^#(\d+):([0-9a-f]{1,8})$/;
const NL = 0x0a;
/** Rewrite acked.log once it grows past this (keeping only what still matters). */
const ACKS_COMPACT_BYTES = 1024 * 1024;
/** Items whose keys are remembered for de-duplication, beyond those still in the outbox. */
const RECENT_KEYS = 200_000;
/** Bytes read from a segment at a time (doubled for a longer line). */
const READ_BYTES = 1024 * 1024;

/** An append that would take the outbox past its bound: refused, nothing of it kept. */
export class OutboxFull extends Error {
  override readonly name = 'OutboxFull';
  readonly code = 'relay_outbox_full';
}

/** The size an item is reckoned at before any has been appended (a browser envelope is about this). */
const FIRST_ITEM_BYTES = 1024;
/** A trailer line, `#<bytes>:<crc32>\n`, at most. */
const TRAILER_BYTES = 20;

export interface OutboxItem extends RelayItem {
  seq: number;
}

interface Segment {
  first: number;
  /** Items in its whole appends. */
  count: number;
  /** Bytes of whole appends: all a reader may read. */
  bytes: number;
}

export interface OutboxOptions {
  /** Bytes the outbox may hold; `hasRoom` says no past it. */
  maxBytes: number;
  /** A new segment starts past this many bytes. Default: an eighth of maxBytes, 1-16 MiB. */
  segmentBytes?: number;
  warn?: (message: string) => void;
}

/** The whole appends at the start of a segment's bytes: their length, their lines (without trailers). */
function wholeAppends(bytes: Buffer): { length: number; lines: string[] } {
  let start = 0;
  const lines: string[] = [];
  let blockStart = 0;
  for (;;) {
    const end = bytes.indexOf(NL, start);
    if (end < 0) return { length: blockStart, lines };
    if (bytes[start] === 0x23 /* # */) {
      const fields = TRAILER.exec(bytes.toString('latin1', start, end));
      const block = bytes.subarray(blockStart, start);
      if (!fields || Number(fields[1]) !== block.length || parseInt(fields[2] ?? '', 16) !== crc32(block)) {
        return { length: blockStart, lines };
      }
      lines.push(...block.toString('utf8').split('\n').slice(0, -1));
      blockStart = end + 1;
    }
    start = end + 1;
  }
}

const parseLine = (line: string): RelayItem => {
  const space = line.indexOf(' ');
  return { key: parseInt(line.slice(0, space), 36), text: line.slice(space + 1) };
};

export class Outbox {
  private readonly segments: Segment[];
  private file: FileHandle;
  private acks: FileHandle;
  private acksBytes: number;
  /** Every sequence number below it is settled. */
  private floor: number;
  /** Settled sequence numbers at or above `floor`. */
  private readonly settled = new Set<number>();
  /** The next item to read from disk. */
  private cursor: { seq: number; segment: number; offset: number };
  /** Items to send again before those on disk (refused one by one with a retryable status). */
  private retry: OutboxItem[] = [];
  private readonly recent = new RecentKeys(RECENT_KEYS);
  private readonly commits: GroupCommit<RelayItem[]>;
  private readonly segmentBytes: number;
  private closed = false;
  /** Bytes of appends admitted and not written yet: counted against maxBytes already. */
  private reserved = 0;
  /** Items and bytes appended by this process: what hasRoom reckons an item's size by. */
  private appended = { items: 0, bytes: 0 };
  private waiting: (() => void)[] = [];
  /** Acknowledgements, one write at a time. */
  private acking: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    segments: Segment[],
    file: FileHandle,
    acks: FileHandle,
    acksBytes: number,
    settled: { floor: number; above: number[] },
    private readonly options: OutboxOptions,
  ) {
    this.segments = segments;
    this.file = file;
    this.acks = acks;
    this.acksBytes = acksBytes;
    this.floor = settled.floor;
    for (const seq of settled.above) this.settled.add(seq);
    // From the oldest segment's start: settled items are skipped as they are read.
    const oldest = this.segments[0]?.first ?? 0;
    this.cursor = { seq: oldest, segment: oldest, offset: 0 };
    this.segmentBytes =
      options.segmentBytes ?? Math.min(16 * 1024 ** 2, Math.max(1024 ** 2, options.maxBytes / 8));
    this.commits = new GroupCommit<RelayItem[]>((batches) => this.write(batches.flat()), 1_000_000, 1);
  }

  /** Opens the outbox in `dir` (made when missing), cutting off any append a crash left incomplete. */
  static async open(dir: string, options: OutboxOptions): Promise<Outbox> {
    mkdirSync(dir, { recursive: true });
    const firsts = readdirSync(dir)
      .map((name) => SEGMENT.exec(name)?.[1])
      .filter((first): first is string => first !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const segments: Segment[] = [];
    const keys: number[] = [];
    for (const first of firsts) {
      const file = path.join(dir, segmentName(first));
      const bytes = await readFile(file);
      const { length, lines } = wholeAppends(bytes);
      if (length < bytes.length) {
        options.warn?.(
          `relay outbox: cut ${bytes.length - length} bytes of an incomplete append off ${file}`,
        );
        await truncate(file, length);
      }
      for (const line of lines) keys.push(parseLine(line).key);
      segments.push({ first, count: lines.length, bytes: length });
    }
    if (segments.length === 0) {
      // Nothing kept: what acked.log says is about items gone.
      await rm(path.join(dir, ACKS), { force: true });
      segments.push({ first: 0, count: 0, bytes: 0 });
    }
    const last = segments[segments.length - 1] as Segment;
    const file = await open(path.join(dir, segmentName(last.first)), 'a');
    if (firsts.length === 0) await syncDir(dir);
    const acksText = await readFile(path.join(dir, ACKS), 'latin1').catch(() => '');
    const first = segments[0]?.first ?? 0;
    const settled = settledIn(acksText, first, last.first + last.count);
    const acks = await open(path.join(dir, ACKS), 'a');
    const outbox = new Outbox(dir, segments, file, acks, acksText.length, settled, options);
    for (const key of keys) outbox.recent.add(key);
    return outbox;
  }

  /** Bytes of the segments on disk (settled items included until their segment goes). */
  get bytes(): number {
    return this.segments.reduce((sum, s) => sum + s.bytes, 0);
  }

  /** Items appended and not settled yet. */
  get pending(): number {
    const total = this.next_seq - this.floor;
    return total - this.settled.size;
  }

  private get next_seq(): number {
    const last = this.segments[this.segments.length - 1] as Segment;
    return last.first + last.count;
  }

  /**
   * Whether an append of `count` more items would fit under maxBytes, reckoning each at the mean size
   * of the items appended so far. It is asked before the items are known; append() then holds the
   * bound with their real size.
   */
  hasRoom(count = 0): boolean {
    const mean = this.appended.items > 0 ? this.appended.bytes / this.appended.items : FIRST_ITEM_BYTES;
    return this.bytes + this.reserved + count * mean <= this.options.maxBytes;
  }

  /** Whether an item of this identity was appended recently (or is still in the outbox). */
  has(key: number): boolean {
    return this.recent.has(key);
  }

  /**
   * Appends items, skipping those whose identity the outbox already holds or held recently (a browser
   * resending a batch whose answer it lost); resolves once they are on disk. Appends share fsyncs.
   * Rejects with OutboxFull when the append would take the outbox (with the appends still being
   * written) past maxBytes; an empty outbox takes any append, so one request larger than the bound is
   * not refused for ever: the bound is exceeded by one request's items at most.
   */
  async append(items: RelayItem[]): Promise<void> {
    if (this.closed) throw new Error('The relay outbox is closed.');
    const fresh: RelayItem[] = [];
    let size = TRAILER_BYTES;
    for (const item of items) {
      if (this.recent.has(item.key)) continue;
      this.recent.add(item.key);
      fresh.push(item);
      size += item.key.toString(36).length + Buffer.byteLength(item.text) + 2;
    }
    if (fresh.length === 0) return;
    const empty = this.pending === 0 && this.reserved === 0;
    if (!empty && this.bytes + this.reserved + size > this.options.maxBytes) {
      // Refused: the sender resends them later, which must not count as a duplicate.
      for (const item of fresh) this.recent.delete(item.key);
      throw new OutboxFull(
        `The relay outbox is full (${this.bytes} bytes, ${this.reserved} being written, ${size} more asked; the bound is ${this.options.maxBytes}).`,
      );
    }
    this.reserved += size;
    try {
      await this.commits.add(fresh, fresh.length);
      this.appended.items += fresh.length;
      this.appended.bytes += size;
    } catch (error) {
      // Not stored: the sender is answered 503 and resends them, which must not count as a duplicate.
      for (const item of fresh) this.recent.delete(item.key);
      throw error;
    } finally {
      this.reserved -= size;
    }
  }

  private async write(items: RelayItem[]): Promise<void> {
    let last = this.segments[this.segments.length - 1] as Segment;
    if (last.bytes >= this.segmentBytes) {
      const next: Segment = { first: last.first + last.count, count: 0, bytes: 0 };
      const file = await open(path.join(this.dir, segmentName(next.first)), 'a');
      await syncDir(this.dir);
      await this.file.close();
      this.file = file;
      this.segments.push(next);
      last = next;
    }
    let block = '';
    for (const item of items) block += `${item.key.toString(36)} ${item.text}\n`;
    const bytes = Buffer.from(block, 'utf8');
    const trailer = Buffer.from(`#${bytes.length}:${crc32(bytes).toString(16)}\n`, 'latin1');
    await this.file.writev([bytes, trailer]);
    await this.file.datasync();
    last.bytes += bytes.length + trailer.length;
    last.count += items.length;
    for (const wake of this.waiting.splice(0)) wake();
  }

  /** Resolves when items are waiting to be sent (at once when some are), or the outbox closes. */
  async waitForItems(): Promise<void> {
    if (this.closed || this.retry.length > 0 || this.cursor.seq < this.next_seq) return;
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  /** Resolves whoever waits in waitForItems (the forwarder stopping). */
  interrupt(): void {
    for (const wake of this.waiting.splice(0)) wake();
  }

  /**
   * The next items to send, oldest first (those refused with a retryable status before the others),
   * at most `maxItems` and about `maxBytes` of text. Each is handed out once, until `settle` gives it
   * back for another try.
   */
  async next(maxItems: number, maxBytes: number): Promise<OutboxItem[]> {
    const batch: OutboxItem[] = [];
    let bytes = 0;
    while (batch.length < maxItems && this.retry.length > 0 && bytes < maxBytes) {
      const item = this.retry.shift() as OutboxItem;
      batch.push(item);
      bytes += item.text.length;
    }
    let readBytes = READ_BYTES;
    while (batch.length < maxItems && bytes < maxBytes && this.cursor.seq < this.next_seq) {
      const index = this.segments.findIndex((s) => s.first === this.cursor.segment);
      const segment = this.segments[index];
      // The cursor's segment is never deleted (dropSettledSegments), so it is always there.
      if (!segment) throw new Error(`relay outbox: segment ${this.cursor.segment} is missing`);
      if (this.cursor.offset >= segment.bytes) {
        const following = this.segments[index + 1];
        if (!following) break;
        this.cursor = { seq: following.first, segment: following.first, offset: 0 };
        continue;
      }
      const length = Math.min(readBytes, segment.bytes - this.cursor.offset);
      const chunk = Buffer.allocUnsafe(length);
      const handle = await open(path.join(this.dir, segmentName(segment.first)), 'r');
      try {
        await handle.read(chunk, 0, length, this.cursor.offset);
      } finally {
        await handle.close();
      }
      let start = 0;
      let progressed = false;
      for (;;) {
        if (batch.length >= maxItems || bytes >= maxBytes) break;
        const end = chunk.indexOf(NL, start);
        if (end < 0) break;
        progressed = true;
        const line = chunk.toString('utf8', start, end);
        start = end + 1;
        if (line.startsWith('#')) continue;
        const seq = this.cursor.seq++;
        if (seq < this.floor || this.settled.has(seq)) continue;
        const item = { ...parseLine(line), seq };
        batch.push(item);
        bytes += item.text.length;
      }
      this.cursor.offset += start;
      // A line longer than what was read: read more at once next time round.
      readBytes = progressed ? READ_BYTES : readBytes * 2;
    }
    return batch;
  }

  /**
   * After the endpoint's answer: `done` are settled for good (taken, or refused for good), `again`
   * go back to be sent before anything newer. The settled ones are written down (fdatasync) before
   * this resolves; segments holding nothing unsettled are deleted.
   */
  settle(done: readonly OutboxItem[], again: readonly OutboxItem[] = []): Promise<void> {
    const result = this.acking.then(() => this.writeAcks(done, again));
    this.acking = result.catch(() => undefined);
    return result;
  }

  private async writeAcks(done: readonly OutboxItem[], again: readonly OutboxItem[]): Promise<void> {
    this.retry.unshift(...again);
    if (done.length === 0) return;
    const seqs = done.map((item) => item.seq).sort((a, b) => a - b);
    let text = '';
    for (let i = 0; i < seqs.length;) {
      let j = i;
      while (j + 1 < seqs.length && (seqs[j + 1] as number) === (seqs[j] as number) + 1) j++;
      text += i === j ? `${seqs[i]}\n` : `${seqs[i]}-${seqs[j]}\n`;
      i = j + 1;
    }
    await this.acks.write(text);
    await this.acks.datasync();
    this.acksBytes += text.length;
    for (const seq of seqs) if (seq >= this.floor) this.settled.add(seq);
    this.advanceFloor();
    await this.dropSettledSegments();
    if (this.acksBytes > ACKS_COMPACT_BYTES) await this.compactAcks();
  }

  private advanceFloor(): void {
    while (this.settled.has(this.floor)) this.settled.delete(this.floor++);
  }

  /** Deletes the segments (but the one being appended to) whose items are all settled. */
  private async dropSettledSegments(): Promise<void> {
    while (this.segments.length > 1) {
      const first = this.segments[0] as Segment;
      // Nor the one the cursor reads: it moves on to the next first.
      if (this.floor < first.first + first.count || this.cursor.segment === first.first) return;
      this.segments.shift();
      await rm(path.join(this.dir, segmentName(first.first)), { force: true });
    }
  }

  /** acked.log rewritten with only the settled numbers still in the outbox (write, fsync, rename). */
  private async compactAcks(): Promise<void> {
    const first = this.segments[0]?.first ?? 0;
    const lines = this.floor > first ? [`${first}-${this.floor - 1}`] : [];
    for (const seq of [...this.settled].sort((a, b) => a - b)) lines.push(String(seq));
    const text = `${lines.join('\n')}\n`;
    const temp = path.join(this.dir, `${ACKS}.tmp`);
    const handle = await open(temp, 'w');
    try {
      await handle.write(text);
      await handle.datasync();
    } finally {
      await handle.close();
    }
    await this.acks.close();
    await rename(temp, path.join(this.dir, ACKS));
    await syncDir(this.dir);
    this.acks = await open(path.join(this.dir, ACKS), 'a');
    this.acksBytes = text.length;
  }

  /** Waits for the appends and acknowledgements under way, then closes the files. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.commits.drain();
    await this.acking;
    for (const wake of this.waiting.splice(0)) wake();
    await this.file.close();
    await this.acks.close();
  }
}

/**
 * What acked.log says of the items still in the segments, `first` to `end` (exclusive): the floor
 * (every item below it settled) and the settled items above it. Its ranges are clipped to what is held
 * before any is counted one by one, so opening costs what the outbox holds, not what it ever settled.
 */
function settledIn(acksText: string, first: number, end: number): { floor: number; above: number[] } {
  const ranges: [number, number][] = [];
  // The last line may be incomplete (a crash while writing it): those items are sent again.
  for (const line of acksText.split('\n').slice(0, -1)) {
    const [from = NaN, to = from] = line.split('-').map(Number);
    if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) continue;
    const clipped: [number, number] = [Math.max(from, first), Math.min(to, end - 1)];
    if (clipped[0] <= clipped[1]) ranges.push(clipped);
  }
  ranges.sort((a, b) => a[0] - b[0]);
  let floor = first;
  const above: number[] = [];
  for (const [from, to] of ranges) {
    // Sorted by start: once a range starts past the floor, no later one reaches back to it.
    if (from <= floor) floor = Math.max(floor, to + 1);
    else for (let seq = from; seq <= to; seq++) above.push(seq);
  }
  return { floor, above };
}

/** Makes a new or renamed directory entry durable. */
async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** For tests: the size of the outbox's files. */
export async function outboxFileBytes(dir: string): Promise<number> {
  let total = 0;
  for (const name of readdirSync(dir)) total += (await stat(path.join(dir, name))).size;
  return total;
}

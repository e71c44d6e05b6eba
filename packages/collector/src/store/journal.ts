import { mkdirSync, readdirSync } from 'node:fs';
import { open, readFile, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';
import { GS, GS_BYTE, RS, RS_BYTE } from '../protocol/packed.js';

/**
 * The collector's own write-ahead journal: what makes an answer durable. Accepted items, packed into
 * rows (protocol/packed.ts), are appended to a segment file and fdatasync'ed before the request is answered; the
 * store loads them into DuckDB later, in large transactions (store.ts), keeps the position it has
 * loaded up to in DuckDB itself, and deletes segments it has loaded whole. A segment ends once it has
 * grown past SEGMENT_BYTES.
 *
 * A segment is UTF-8 text: each append's rows (each ending with RS), then a trailer row, GS followed by
 * the byte length and CRC-32 of those rows, ending with RS. Packed rows never hold GS, so DuckDB skips
 * the trailers by their first character. A crash can leave the last append incomplete; it was never
 * answered, and opening the journal cuts each segment after its last append whose trailer holds.
 */
const FILE = /^segment-(\d{12})\.log$/;
const segmentName = (id: number) => `segment-${String(id).padStart(12, '0')}.log`;
const TRAILER = /^(\d+):([0-9a-f]{1,8})$/;
const KEPT_BUFFER = 4 * 1024 * 1024;
const SEGMENT_BYTES = 64 * 1024 * 1024;
const MAX_KEPT_BUFFER = 16 * 1024 * 1024;

/** How many bytes at the start of `bytes` are whole appends (trailer and checksum verified). */
export function wholeAppends(bytes: Buffer): number {
  let start = 0;
  for (;;) {
    const trailer = bytes.indexOf(GS_BYTE, start);
    if (trailer < 0) return start;
    const end = bytes.indexOf(RS_BYTE, trailer);
    if (end < 0) return start;
    const fields = TRAILER.exec(bytes.toString('latin1', trailer + 1, end));
    const rows = bytes.subarray(start, trailer);
    if (!fields || Number(fields[1]) !== rows.length || parseInt(fields[2] ?? '', 16) !== crc32(rows)) {
      return start;
    }
    start = end + 1;
  }
}

/** Where the store has loaded the journal up to: every row before byte `offset` of segment `segment`. */
export interface JournalPosition {
  segment: number;
  offset: number;
}

export class Journal {
  private current: { id: number; file: FileHandle; size: number } | undefined;
  private nextId: number;
  /** Bytes of whole appends in each segment there is, by id: all a reader may read. */
  private readonly sizes: Map<number, number>;
  /** Appends, one at a time, in call order. */
  private tail: Promise<unknown> = Promise.resolve();
  /** Reused for every append (appends never overlap), so writing allocates nothing per request. */
  private buffer = Buffer.allocUnsafeSlow(KEPT_BUFFER);

  private constructor(
    private readonly dir: string,
    sizes: Map<number, number>,
    after: number,
    private readonly segmentBytes: number,
  ) {
    this.sizes = sizes;
    this.nextId = Math.max(after, ...sizes.keys()) + 1;
  }

  /**
   * Opens the journal in `dir`: deletes the segments before `loaded.segment` (in the store already),
   * and cuts any other after its last whole append (a crash can leave half of one).
   */
  static async open(
    dir: string,
    loaded: JournalPosition,
    warn: (message: string) => void,
    segmentBytes = SEGMENT_BYTES,
  ): Promise<Journal> {
    mkdirSync(dir, { recursive: true });
    const sizes = new Map<number, number>();
    for (const name of readdirSync(dir).sort()) {
      const id = Number(FILE.exec(name)?.[1] ?? NaN);
      if (Number.isNaN(id)) continue;
      const file = path.join(dir, name);
      if (id < loaded.segment) {
        await rm(file, { force: true });
        continue;
      }
      const bytes = await readFile(file);
      const whole = wholeAppends(bytes);
      if (whole < bytes.length) {
        warn(`journal: ${name} ends in ${bytes.length - whole} bytes of an unfinished write; dropped`);
        await truncate(file, whole);
      }
      sizes.set(id, whole);
    }
    return new Journal(dir, sizes, loaded.segment, segmentBytes);
  }

  /** The file of segment `id`. */
  file(id: number): string {
    return path.join(this.dir, segmentName(id));
  }

  /** The segments there are, oldest first: the bytes of whole appends in each, and whether it is the one appended to. */
  segments(): { id: number; size: number; open: boolean }[] {
    return [...this.sizes]
      .map(([id, size]) => ({ id, size, open: id === this.current?.id }))
      .sort((a, b) => a.id - b.id);
  }

  /**
   * Appends packed rows (each string a run of rows, as packItems makes them) in one write, and resolves
   * once they are on disk (fdatasync). `durable` runs then, before any later append begins.
   */
  append(chunks: readonly string[], durable?: () => void): Promise<void> {
    return this.serially(async () => {
      const length = this.encode(chunks);
      const segment = await this.segment();
      try {
        let written = 0;
        while (written < length) {
          written += (await segment.file.write(this.buffer, written, length - written)).bytesWritten;
        }
        await segment.file.datasync();
      } catch (error) {
        // Whatever part of the write reached the file lies past the segment's whole appends, where no
        // reader looks (and opening cuts it off); the next append starts a new segment.
        await this.endSegment();
        throw error;
      }
      segment.size += length;
      this.sizes.set(segment.id, segment.size);
      if (segment.size >= this.segmentBytes) await this.endSegment();
      // A burst may have grown the buffer; keep only an ordinary one.
      if (this.buffer.length > MAX_KEPT_BUFFER) this.buffer = Buffer.allocUnsafeSlow(KEPT_BUFFER);
      durable?.();
    });
  }

  /** Deletes the segments before `segment`, once the store has loaded them whole. */
  async drop(segment: number): Promise<void> {
    for (const id of [...this.sizes.keys()]) {
      if (id >= segment || id === this.current?.id) continue;
      this.sizes.delete(id);
      await rm(this.file(id), { force: true });
    }
  }

  /** Ends the segment appended to (the next append starts another), so a load can finish it and let it go. */
  seal(): Promise<void> {
    return this.serially(() => this.endSegment());
  }

  close(): Promise<void> {
    return this.seal();
  }

  /** Writes the chunks and their trailer into `buffer`; returns the length. */
  private encode(chunks: readonly string[]): number {
    const size = chunks.reduce((n, c) => n + Buffer.byteLength(c), 32);
    if (size > this.buffer.length) this.buffer = Buffer.allocUnsafeSlow(size);
    let at = 0;
    for (const chunk of chunks) at += this.buffer.write(chunk, at);
    at += this.buffer.write(
      `${GS}${at}:${crc32(this.buffer.subarray(0, at)).toString(16)}${RS}`,
      at,
      'latin1',
    );
    return at;
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const result = this.tail.then(step);
    this.tail = result.catch(() => undefined);
    return result;
  }

  private async endSegment(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.file.close().catch(() => undefined);
  }

  /** The open segment, creating it (and making its directory entry durable) when there is none. */
  private async segment(): Promise<{ id: number; file: FileHandle; size: number }> {
    if (this.current) return this.current;
    const id = this.nextId++;
    const file = await open(this.file(id), 'a');
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    this.current = { id, file, size: 0 };
    this.sizes.set(id, 0);
    return this.current;
  }
}

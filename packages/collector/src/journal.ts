import { mkdirSync, readdirSync } from 'node:fs';
import { open, readFile, rm, truncate, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import { crc32 } from 'node:zlib';

/**
 * The collector's own write-ahead journal: what makes an answer durable. Accepted items are appended
 * to a segment file and fdatasync'ed before the request is answered; the store loads them into DuckDB
 * later, in large transactions (see store.ts and docs/decisions/0004-collector-store.md), and drops a
 * segment once DuckDB has committed everything in it.
 *
 * A segment is a run of records: a 16-byte header (magic, kind, payload length, CRC-32 of the payload)
 * and the payload. A crash can leave the last write incomplete; that write was never answered, and
 * reading stops at the first record whose header or checksum does not hold.
 */
export interface JournalRecord {
  kind: RecordKind;
  payload: Uint8Array;
}

export const RecordKind = {
  /** Packed rows (packed.ts), UTF-8. */
  Rows: 1,
  /** A JSON array of items that could not be packed. */
  Items: 2,
} as const;
export type RecordKind = (typeof RecordKind)[keyof typeof RecordKind];

export interface Segment {
  id: number;
  records: JournalRecord[];
}

const MAGIC = 0x47484a31; // "GHJ1"
const HEADER_BYTES = 16;
const FILE = /^segment-(\d{12})\.log$/;
const fileName = (id: number) => `segment-${String(id).padStart(12, '0')}.log`;

function header(record: JournalRecord): Buffer {
  const h = Buffer.alloc(HEADER_BYTES);
  h.writeUInt32BE(MAGIC, 0);
  h.writeUInt8(record.kind, 4);
  h.writeUInt32LE(record.payload.byteLength, 8);
  h.writeUInt32LE(crc32(record.payload), 12);
  return h;
}

/** The whole records at the start of `bytes`, and where they end. */
export function readRecords(bytes: Buffer): { records: JournalRecord[]; end: number } {
  const records: JournalRecord[] = [];
  let at = 0;
  while (at + HEADER_BYTES <= bytes.length) {
    const kind = bytes.readUInt8(at + 4);
    const length = bytes.readUInt32LE(at + 8);
    const start = at + HEADER_BYTES;
    if (bytes.readUInt32BE(at) !== MAGIC || (kind !== RecordKind.Rows && kind !== RecordKind.Items)) break;
    if (start + length > bytes.length) break;
    const payload = bytes.subarray(start, start + length);
    if (crc32(payload) !== bytes.readUInt32LE(at + 12)) break;
    records.push({ kind, payload });
    at = start + length;
  }
  return { records, end: at };
}

export class Journal {
  private current: { id: number; file: FileHandle } | undefined;
  private nextId: number;
  /** Appends and rotations, one at a time, in call order. */
  private tail: Promise<unknown> = Promise.resolve();

  private constructor(
    private readonly dir: string,
    lastId: number,
  ) {
    this.nextId = lastId + 1;
  }

  /**
   * Opens the journal in `dir`: deletes segments up to `loadedThrough` (already in the store) and
   * returns the others' records, oldest first, truncating any segment after its last whole record.
   */
  static async open(
    dir: string,
    loadedThrough: number,
    warn: (message: string) => void,
  ): Promise<{ journal: Journal; segments: Segment[] }> {
    mkdirSync(dir, { recursive: true });
    const ids = readdirSync(dir)
      .map((name) => FILE.exec(name)?.[1])
      .filter((id) => id !== undefined)
      .map(Number)
      .sort((a, b) => a - b);
    const segments: Segment[] = [];
    for (const id of ids) {
      const file = path.join(dir, fileName(id));
      if (id <= loadedThrough) {
        await rm(file, { force: true });
        continue;
      }
      const bytes = await readFile(file);
      const { records, end } = readRecords(bytes);
      if (end < bytes.length) {
        warn(`journal: ${fileName(id)} ends in ${bytes.length - end} bytes of an unfinished write; dropped`);
        await truncate(file, end);
      }
      segments.push({ id, records });
    }
    return { journal: new Journal(dir, Math.max(loadedThrough, ...ids)), segments };
  }

  /**
   * Appends the records in one write and resolves once they are on disk (fdatasync). `durable` runs
   * then, before any later append or rotation begins.
   */
  append(records: readonly JournalRecord[], durable?: () => void): Promise<void> {
    const buffers = records.flatMap((r) => [header(r), r.payload]);
    return this.serially(async () => {
      const file = await this.file();
      try {
        const total = buffers.reduce((sum, b) => sum + b.byteLength, 0);
        let { bytesWritten } = await file.writev(buffers);
        // A short write (rare for files) goes on from where it stopped.
        if (bytesWritten < total) {
          const all = Buffer.concat(buffers);
          while (bytesWritten < total) bytesWritten += (await file.write(all, bytesWritten)).bytesWritten;
        }
        await file.datasync();
        durable?.();
      } catch (error) {
        // Whatever part of the write reached the file ends this segment (reading stops there); the
        // next append starts a new one, so nothing written later is hidden behind it.
        await this.endSegment();
        throw error;
      }
    });
  }

  /**
   * Ends the current segment once the appends before this call are done: later appends go to a new
   * one. Resolves to the id of the last segment holding anything appended so far (0 if none).
   */
  rotate(): Promise<number> {
    return this.serially(async () => {
      await this.endSegment();
      return this.nextId - 1;
    });
  }

  /** Deletes the segments up to `id`, once the store has committed their items. */
  async drop(through: number): Promise<void> {
    for (const name of readdirSync(this.dir)) {
      const id = FILE.exec(name)?.[1];
      if (id !== undefined && Number(id) <= through) await rm(path.join(this.dir, name), { force: true });
    }
  }

  close(): Promise<void> {
    return this.serially(() => this.endSegment());
  }

  private async endSegment(): Promise<void> {
    const current = this.current;
    this.current = undefined;
    await current?.file.close().catch(() => undefined);
  }

  private serially<T>(step: () => Promise<T>): Promise<T> {
    const result = this.tail.then(step);
    this.tail = result.catch(() => undefined);
    return result;
  }

  /** The open segment, creating it (and making its directory entry durable) when there is none. */
  private async file(): Promise<FileHandle> {
    if (this.current) return this.current.file;
    const id = this.nextId++;
    const file = await open(path.join(this.dir, fileName(id)), 'a');
    const dir = await open(this.dir, 'r');
    try {
      await dir.sync();
    } finally {
      await dir.close();
    }
    this.current = { id, file };
    return file;
  }
}

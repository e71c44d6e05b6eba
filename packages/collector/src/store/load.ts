import { statSync } from 'node:fs';
import { appendFile, open, type FileHandle } from 'node:fs/promises';
import path from 'node:path';
import type { DuckDBConnection } from '@duckdb/node-api';
import type { Journal, JournalPosition } from './journal.js';
import { FS_BYTE, GS_BYTE, RS_BYTE, unescapeSql } from '../protocol/packed.js';
import { rowLayout } from '../protocol/item-row.js';
import { derivedColumns, derivedSql, fromEnvelope, itemColumns } from './row-layout.js';
import { envelopeValues } from '../protocol/envelope-values.js';
import { rollupInsertSql, sourcesInsertSql } from './rollup.js';
import { flowLoadSql, sketchInsertSql } from './daily-sketch.js';

/*
 * Loading the journal into DuckDB: runs of packed rows bound as one BLOB to an INSERT that splits
 * them, each transaction also moving the journal position kept in DuckDB, so a crash between a commit
 * and deleting a segment loads nothing twice; a record DuckDB refuses is moved aside (ADR 0015).
 */

/** Where journal records DuckDB cannot load are moved aside (appended, each ending with RS). */
export function rejectedFile(dataDir: string): string {
  return path.join(dataDir, 'journal-rejected.log');
}

/** Journal rows bound per INSERT of a load. */
const LOAD_RUN_BYTES = 8 * 1024 * 1024;
/** DuckDB errors that a record's own content causes (anything else, such as a full disk, is retried). */
const RECORD_ERROR = /^(Conversion|Invalid Input|Constraint|Out of Range) Error/;

/** A run of journal rows that DuckDB would not load, from `at`, `bytes` long (unknown: longer than a load run). */
class UnloadableRun extends Error {
  readonly code = 'UNLOADABLE_RUN';
  constructor(
    readonly at: JournalPosition,
    readonly bytes: number | undefined,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/**
 * Inserts a run of whole journal rows (a BLOB of UTF-8), skipping the trailers. A run is all plain rows
 * or all escaped ones (which begin with FS); in those, escapes are undone. Plain runs are nearly all,
 * and their SQL has no such work (undoing it in every row, under a CASE, cost 15 % of a load).
 */
function insertRows(escaped: boolean): string {
  const text = (f: string) =>
    escaped ? `CASE WHEN ${f} = chr(0) THEN NULL ELSE ${unescapeSql(f)} END` : `nullif(${f}, chr(0))`;
  // Each column's cell, f[k], as its SQL type (rowLayout); chr(0) is NULL.
  const cells = rowLayout.map(({ kind, column }, i) => {
    const f = `f[${i + 1}]`;
    const cell =
      kind === 'time'
        ? `epoch_ms(${f}::BIGINT)`
        : kind === 'number'
          ? `nullif(${f}, chr(0))::DOUBLE`
          : kind === 'boolean'
            ? `nullif(${f}, chr(0))::BOOLEAN`
            : text(f);
    return `${cell} AS ${column}`;
  });
  // The envelope's values packed after the row's own columns (envelope-values.ts), where the row has
  // them; else (an older journal row, a rare envelope) the derived columns read the envelope's JSON.
  const values = envelopeValues.map((_, j) => `${text(`f[${rowLayout.length + 1 + j}]`)} AS value_${j}`);
  // A packed value is NULL for the types it is not read for: a column reading it for another type
  // would get NULL, so that is refused here, when the module loads.
  const read = (json: string, type: string) => {
    const j = envelopeValues.findIndex(
      (v) => v.json === json && (v.types as readonly string[]).includes(type),
    );
    if (j < 0) throw new Error(`no packed envelope value for ${json} of a ${type}`);
    return `CASE WHEN packed_values THEN value_${j} ELSE ${fromEnvelope(json)} END`;
  };
  // The derived columns after the row's own, computed from its type and envelope; by name, as a store
  // made before some columns has them in another order.
  return `INSERT INTO ${STAGE} (${itemColumns.join(', ')})
    SELECT ${rowLayout.map((c) => c.column).join(', ')}, ${derivedColumns.map((c) => derivedSql(c, read)).join(', ')}
    FROM (
      SELECT ${cells.join(', ')}, len(f) > ${rowLayout.length} AS packed_values, ${values.join(', ')}
      FROM (
        SELECT string_split(${escaped ? 'r[2:]' : 'r'}, chr(31)) AS f
        FROM (SELECT unnest(string_split(decode($1::BLOB), chr(30))) AS r)
        WHERE r <> '' AND ascii(r) <> 29
      )
    )`;
}

/**
 * Where a load's rows wait until its transaction ends (ADR 0071): then they go into `items` in the
 * order they arrived, and their hourly rollup, sources and daily sketches are added from here. A live
 * site's items arrive seconds after they happen, so each row group holds a narrow span of time and a
 * query's time range skips the others (DuckDB's zone maps); sorting each load by time as well cost a
 * fifth of the store's load rate (docs/performance/usage-history.md, section 11), and day compaction (ADR 0072)
 * rewrites each past day sorted anyway. A temporary table of the writer's connection, with the items'
 * columns and constraints, so a row `items` would refuse is refused here, as a record.
 */
const STAGE = 'load_stage';
const stageSql = `CREATE TEMP TABLE IF NOT EXISTS ${STAGE} (${[...rowLayout, ...derivedColumns]
  .map((c) => `${c.column} ${c.sql}`)
  .join(', ')})`;
const stageToItems = [
  // Before the rows go in: it reads the items as they were (daily-sketch.ts).
  flowLoadSql(STAGE),
  `INSERT INTO items (${itemColumns.join(', ')}) SELECT * FROM ${STAGE}`,
  rollupInsertSql(STAGE),
  sourcesInsertSql(STAGE),
  ...sketchInsertSql(STAGE),
  `DELETE FROM ${STAGE}`,
];

/** How far the journal is in `items` already: each load moves it in its own transaction. */
const journalSchema = `CREATE TABLE IF NOT EXISTS journal_position (segment BIGINT NOT NULL, byte_offset BIGINT NOT NULL);
  INSERT INTO journal_position SELECT 0, 0 WHERE NOT EXISTS (SELECT 1 FROM journal_position)`;

/**
 * The run of whole rows at the start of `bytes`: at most `max` item rows (trailers, after GS, are not
 * items), all plain or all escaped (after FS), and where it ends.
 */
function wholeRows(bytes: Buffer, max: number): { end: number; items: number; escaped: boolean } {
  let end = 0;
  let items = 0;
  let escaped: boolean | undefined;
  while (items < max) {
    const next = bytes.indexOf(RS_BYTE, end);
    if (next < 0) break;
    const first = bytes[end];
    if (first !== GS_BYTE) {
      if (escaped === undefined) escaped = first === FS_BYTE;
      else if (escaped !== (first === FS_BYTE)) break;
      items++;
    }
    end = next + 1;
  }
  return { end, items, escaped: escaped ?? false };
}

/** The row that starts at byte `at` of a journal segment, its RS included. */
async function readRow(handle: FileHandle, at: number): Promise<Buffer> {
  const parts: Buffer[] = [];
  for (let offset = at; ;) {
    const chunk = Buffer.allocUnsafe(64 * 1024);
    const { bytesRead } = await handle.read(chunk, 0, chunk.length, offset);
    if (bytesRead === 0) throw new Error(`the journal row at byte ${at} has no end`);
    const end = chunk.subarray(0, bytesRead).indexOf(RS_BYTE);
    if (end >= 0) {
      parts.push(chunk.subarray(0, end + 1));
      return Buffer.concat(parts);
    }
    parts.push(chunk.subarray(0, bytesRead));
    offset += bytesRead;
  }
}

export interface JournalLoader {
  /** Where the journal is loaded up to (kept in DuckDB, and moved in each load's own transaction). */
  readonly loaded: JournalPosition;
  /**
   * Loads up to `limit` of `journal`'s items into DuckDB on `writer`, which must be free (the caller
   * runs one transaction at a time on it); a record DuckDB refuses is moved aside. Resolves to how many.
   */
  load(journal: Journal, limit: number): Promise<number>;
  close(): void;
}

/**
 * Prepares the loads on the store's writer connection: the journal position table (made on first
 * start) and the two INSERTs, plain and escaped rows. `dataDir` holds rejectedFile.
 */
export async function openJournalLoader(
  writer: DuckDBConnection,
  dataDir: string,
  warn: (message: string) => void,
): Promise<JournalLoader> {
  await writer.run(journalSchema);
  await writer.run(stageSql);
  const [segment, offset] = (
    await writer.runAndReadAll('SELECT segment, byte_offset FROM journal_position')
  ).getRows()[0] ?? [0, 0];
  /** Where the journal is loaded up to (kept in DuckDB, and moved in each load's own transaction). */
  let loaded: JournalPosition = { segment: Number(segment), offset: Number(offset) };
  const inserts = {
    plain: await writer.prepare(insertRows(false)),
    escaped: await writer.prepare(insertRows(true)),
  };

  /**
   * Inserts the journal's rows from `from` on, at most `limit` items, in runs of up to LOAD_RUN_BYTES
   * (DuckDB splits ten values of 8 MB far faster than one of 80) read into one reused buffer and cut
   * after a row; resolves to the position reached and the items inserted.
   */
  const run = Buffer.allocUnsafeSlow(LOAD_RUN_BYTES);
  async function insertFrom(
    journal: Journal,
    from: JournalPosition,
    limit: number,
    stopAt?: JournalPosition,
  ) {
    const position = { ...from };
    let rows = 0;
    for (const segment of journal.segments()) {
      const { id, open: appending } = segment;
      if (id < position.segment || rows >= limit || (stopAt && id > stopAt.segment)) continue;
      const size = stopAt?.segment === id ? Math.min(stopAt.offset, segment.size) : segment.size;
      if (id > position.segment) Object.assign(position, { segment: id, offset: 0 });
      const handle = await open(journal.file(id), 'r');
      try {
        while (position.offset < size && rows < limit) {
          const want = Math.min(run.length, size - position.offset);
          const { bytesRead } = await handle.read(run, 0, want, position.offset);
          if (bytesRead < want) throw new Error(`${journal.file(id)} is shorter than its appends`);
          const { end, items, escaped } = wholeRows(run.subarray(0, bytesRead), limit - rows);
          if (end === 0)
            throw new UnloadableRun({ ...position }, undefined, `a row longer than ${run.length} bytes`);
          if (items > 0) {
            try {
              rows += await insertRun(run.subarray(0, end), escaped);
            } catch (error) {
              if (!RECORD_ERROR.test(String((error as Error).message))) throw error;
              const firstLine = (error as Error).message.split('\n', 1)[0] ?? '';
              throw new UnloadableRun({ ...position }, end, firstLine, { cause: error });
            }
          }
          position.offset += end;
        }
      } finally {
        await handle.close();
      }
      // A segment read to its end that takes no more appends is done: the next load may delete it.
      if (position.offset === segment.size && !appending)
        Object.assign(position, { segment: id + 1, offset: 0 });
    }
    return { position, rows };
  }

  /** Inserts whole journal rows, all plain or all escaped; resolves to how many. */
  async function insertRun(rows: Buffer, escaped: boolean): Promise<number> {
    const insert = escaped ? inserts.escaped : inserts.plain;
    insert.bindBlob(1, rows);
    try {
      return Number((await insert.run()).rowsChanged);
    } finally {
      insert.clearBindings();
    }
  }

  /** Runs `work` and moves the journal position to what it resolves to, in one transaction. */
  async function transaction(work: () => Promise<JournalPosition>): Promise<void> {
    await writer.run('BEGIN TRANSACTION');
    try {
      const position = await work();
      for (const sql of stageToItems) await writer.run(sql);
      await writer.run('UPDATE journal_position SET segment = $1, byte_offset = $2', [
        position.segment,
        position.offset,
      ]);
      await writer.run('COMMIT');
      loaded = position;
    } catch (error) {
      await writer.run('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  /** Up to `limit` journaled items (before `stopAt`, if given) into DuckDB in one transaction. */
  async function loadOnce(journal: Journal, limit: number, stopAt?: JournalPosition): Promise<number> {
    let rows = 0;
    await transaction(async () => {
      const reached = await insertFrom(journal, loaded, limit, stopAt);
      rows = reached.rows;
      return reached.position;
    });
    return rows;
  }

  /**
   * Loads, one row per transaction, the run DuckDB refused as a whole, moving each row it refuses
   * aside (to rejectedFile, with a log line): one bad record never holds back the others.
   */
  async function setAside(journal: Journal, failed: UnloadableRun): Promise<number> {
    const file = journal.file(failed.at.segment);
    const handle = await open(file, 'r');
    let rows = 0;
    try {
      let at = failed.at.offset;
      const end = failed.bytes === undefined ? undefined : at + failed.bytes;
      while (end === undefined ? at === failed.at.offset : at < end) {
        const row = await readRow(handle, at);
        const next = { segment: failed.at.segment, offset: at + row.length };
        if (row[0] !== GS_BYTE && row.length <= run.length) {
          try {
            await transaction(async () => {
              rows += await insertRun(row, row[0] === FS_BYTE);
              return next;
            });
            at = next.offset;
            continue;
          } catch (error) {
            if (!RECORD_ERROR.test(String((error as Error).message))) throw error;
          }
        }
        if (row[0] !== GS_BYTE) {
          const aside = rejectedFile(dataDir);
          const where = statSync(aside, { throwIfNoEntry: false })?.size ?? 0;
          await appendFile(aside, row, { flush: true });
          warn(
            `journal: a record of ${row.length} bytes at byte ${at} of ${path.basename(file)} could not be ` +
              `loaded (${failed.message}); moved aside to ${aside} at byte ${where}`,
          );
        }
        await transaction(() => Promise.resolve(next));
        at = next.offset;
      }
    } finally {
      await handle.close();
    }
    return rows;
  }

  return {
    get loaded() {
      return loaded;
    },
    async load(journal, limit) {
      let rows = 0;
      for (;;) {
        try {
          rows += await loadOnce(journal, limit - rows);
          return rows;
        } catch (error) {
          if (!(error instanceof UnloadableRun)) throw error;
          rows += await loadOnce(journal, limit - rows, error.at);
          rows += await setAside(journal, error);
        }
      }
    },
    close() {
      inserts.plain.destroySync();
      inserts.escaped.destroySync();
    },
  };
}

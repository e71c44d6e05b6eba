import { randomUUID } from 'node:crypto';
import type { DuckDBValue } from '@duckdb/node-api';
import { ANNOTATIONS_LIMIT, annotationNoteProblem, USER_ID } from '@gatehouse/api-contract';
import { bucketedPeriod, describePeriod, type Period, type UsageOptions } from './period.js';
import { iso, num, strOrNull, ts } from './values.js';

/*
 * Annotations (docs/decisions/0085-annotations.md): moments an admin marked with a short note, kept in
 * the store's own file beside the items, in a small table of their own. Business data, not telemetry:
 * retention does not prune them, and an erasure of their author keeps the note and drops the author.
 */

export const ANNOTATIONS_TABLE = 'annotations';

export const annotationsTableSql = `CREATE TABLE IF NOT EXISTS ${ANNOTATIONS_TABLE} (
  id UUID NOT NULL, time TIMESTAMP NOT NULL, note VARCHAR NOT NULL, author VARCHAR, created_at TIMESTAMP NOT NULL)`;

/** In an erasure's transaction (bound parameter $1: the user id): the notes stay, their author goes. */
export const eraseAuthorSql = `UPDATE ${ANNOTATIONS_TABLE} SET author = NULL WHERE author = $1`;

/** An annotation as stored: the author is a pseudonymous user id, null once that user was erased. */
export interface StoredAnnotation {
  id: string;
  time: string;
  note: string;
  author: string | null;
  createdAt: string;
}

/**
 * The annotation queries, on the store holder's store: a replica asks them over the internal API, like
 * the usage queries (docs/decisions/0041), so only the process holding the file writes.
 */
export interface AnnotationQueries {
  /** The annotations of a chart's period (the timeseries' own bounds), oldest first. */
  listAnnotations(
    options?: Pick<UsageOptions, 'range' | 'from' | 'to' | 'now'>,
  ): Promise<Period & { annotations: StoredAnnotation[] }>;
  addAnnotation(input: { time: string; note: string; author: string }): Promise<StoredAnnotation>;
  /** The annotation deleted, or null when there is none with this id. */
  deleteAnnotation(id: string): Promise<StoredAnnotation | null>;
  /** Every annotation one user wrote, oldest first: theirs in a per-user export. */
  annotationsBy(author: string): Promise<StoredAnnotation[]>;
}

/** What the annotations need of the store: reads, and writes on its one writer (WritableStore). */
export interface AnnotationStore {
  read(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
  write(sql: string, values?: DuckDBValue[]): Promise<Record<string, unknown>[]>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const COLUMNS = `id::VARCHAR AS id, epoch_ms(time) AS t, note, author, epoch_ms(created_at) AS c`;

function shape(r: Record<string, unknown>): StoredAnnotation {
  return {
    id: String(r.id),
    time: iso(num(r.t)),
    note: String(r.note),
    author: strOrNull(r.author),
    createdAt: iso(num(r.c)),
  };
}

/**
 * The checks of the API's contract again, here: a replica's arguments reach the store holder over the
 * internal API, and nothing but text of the contract's bounds is ever stored.
 */
function checked(input: { time: string; note: string; author: string }) {
  const time = Date.parse(input.time);
  if (typeof input.time !== 'string' || Number.isNaN(time)) throw new RangeError('Invalid annotation time');
  if (typeof input.note !== 'string' || annotationNoteProblem(input.note) !== undefined)
    throw new RangeError('Invalid annotation note');
  if (typeof input.author !== 'string' || !USER_ID.test(input.author))
    throw new RangeError('Invalid annotation author');
  return { time, note: input.note.trim(), author: input.author };
}

/**
 * An annotation as a line of a per-user export (after the user's envelopes): their own data, so without
 * the author (it is them), and told apart from an envelope by its one key.
 */
export function annotationExportLine({ id, time, note, createdAt }: StoredAnnotation): string {
  return `${JSON.stringify({ annotation: { id, time, note, createdAt } })}\n`;
}

export function createAnnotationQueries(store: AnnotationStore): AnnotationQueries {
  return {
    async listAnnotations(options = {}) {
      const p = bucketedPeriod(options);
      const rows = await store.read(
        `SELECT ${COLUMNS} FROM ${ANNOTATIONS_TABLE} WHERE time >= $1 AND time < $2 ORDER BY time, created_at LIMIT ${ANNOTATIONS_LIMIT}`,
        [ts(p.from), ts(p.to)],
      );
      return { ...describePeriod(p), annotations: rows.map(shape) };
    },

    async addAnnotation(input) {
      const { time, note, author } = checked(input);
      const rows = await store.write(
        `INSERT INTO ${ANNOTATIONS_TABLE} VALUES ($1::UUID, $2, $3, $4, $5) RETURNING ${COLUMNS}`,
        [randomUUID(), ts(time), note, author, ts(Date.now())],
      );
      return shape(rows[0] as Record<string, unknown>);
    },

    async deleteAnnotation(id) {
      if (typeof id !== 'string' || !UUID.test(id)) throw new RangeError('Invalid annotation id');
      const rows = await store.write(
        `DELETE FROM ${ANNOTATIONS_TABLE} WHERE id = $1::UUID RETURNING ${COLUMNS}`,
        [id],
      );
      return rows[0] ? shape(rows[0]) : null;
    },

    async annotationsBy(author) {
      if (typeof author !== 'string' || !USER_ID.test(author)) throw new RangeError('Invalid user id');
      const rows = await store.read(
        `SELECT ${COLUMNS} FROM ${ANNOTATIONS_TABLE} WHERE author = $1 ORDER BY time, created_at`,
        [author],
      );
      return rows.map(shape);
    },
  };
}

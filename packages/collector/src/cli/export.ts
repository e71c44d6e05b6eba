#!/usr/bin/env node
/**
 * `telemetry:export [--since <ISO time>] [--type <kind>] [--user <id>]`: prints stored items as
 * newline-delimited JSON envelopes, oldest first, for backups, piping (the output can be posted back to
 * /v2/track) and a user's access request (`--user`: one pseudonymous user id, or an SDK user id; without
 * --type, the annotations the user wrote follow, a `{"annotation":…}` line each, as the API's export).
 */
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { USER_ID } from '@gatehouse/api-contract';
import { telemetryTypes, type TelemetryType } from '../protocol/envelopes.js';
import { readStoreSettings } from './settings.js';
import { annotationExportLine } from '../store/annotations.js';
import { openStore, storeFile, type ExportFilter, type TelemetryStore } from '../store/store.js';

const usage = `Usage: telemetry:export [--since <ISO time>] [--type ${telemetryTypes.join('|')}] [--user <id>]`;

/** Turns the command line into a filter, or throws an Error whose message is for the user. */
export function parseExportArgs(args: string[]): ExportFilter {
  const { values } = parseArgs({
    args,
    options: { since: { type: 'string' }, type: { type: 'string' }, user: { type: 'string' } },
    strict: true,
    allowPositionals: false,
  });
  const filter: ExportFilter = {};
  if (values.since !== undefined) {
    const since = Date.parse(values.since);
    if (Number.isNaN(since)) throw new Error(`--since '${values.since}' is not an ISO 8601 time.`);
    filter.since = new Date(since);
  }
  if (values.type !== undefined) {
    if (!(telemetryTypes as readonly string[]).includes(values.type)) {
      throw new Error(`--type '${values.type}' is not one of ${telemetryTypes.join(', ')}.`);
    }
    filter.type = values.type as TelemetryType;
  }
  if (values.user !== undefined) filter.user = parseUser(values.user);
  return filter;
}

/** A user id as given on the command line: not empty, nor only spaces. */
export function parseUser(user: string): string {
  if (user.trim() === '') throw new Error('--user must name a user id.');
  return user;
}

/**
 * Opens the store of GATEHOUSE_DATA_DIR (loading what its journal still holds, as a server start
 * would), runs `use` and closes it; resolves to the exit code, or 1 when there is no store.
 */
export async function withStore(
  err: NodeJS.WritableStream,
  use: (store: TelemetryStore) => Promise<void>,
): Promise<number> {
  const { dataDir } = readStoreSettings();
  if (!existsSync(storeFile(dataDir))) {
    err.write(`No telemetry store in ${dataDir} (set GATEHOUSE_DATA_DIR).\n`);
    return 1;
  }
  const store = await openStore(dataDir);
  try {
    await use(store);
  } finally {
    await store.close();
  }
  return 0;
}

/** Runs a command's `main` as the process, exiting with its code. */
export function runCommand(main: (args: string[]) => Promise<number>): void {
  // A closed pipe (`| head`) is a normal end for these commands, not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (error: unknown) => {
      console.error(error instanceof Error ? error.message : String(error));
      process.exitCode = 1;
    },
  );
}

/** Runs the command; resolves to the process exit code. */
export async function main(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let filter: ExportFilter;
  try {
    filter = parseExportArgs(args);
    readStoreSettings();
  } catch (error) {
    err.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  return withStore(err, async (store) => {
    let chunk = '';
    for await (const envelope of store.export(filter)) {
      chunk += JSON.stringify(envelope) + '\n';
      // Write in chunks of about 64 KB and respect backpressure, so piping a large store stays flat.
      if (chunk.length > 65_536) {
        if (!out.write(chunk)) await once(out, 'drain');
        chunk = '';
      }
    }
    // The user's own annotations (their data, docs/decisions/0085); --type asks for items of one kind only.
    if (filter.user !== undefined && filter.type === undefined && USER_ID.test(filter.user)) {
      const since = filter.since?.getTime() ?? -Infinity;
      for (const annotation of await store.annotations.annotationsBy(filter.user))
        if (Date.parse(annotation.time) >= since) chunk += annotationExportLine(annotation);
    }
    if (chunk) out.write(chunk);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) runCommand(main);

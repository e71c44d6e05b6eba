#!/usr/bin/env node
/**
 * `telemetry:erase --user <id>`: deletes every stored item of one user (its pseudonymous id, or an SDK
 * user id), those still in the journal included, for an erasure request. Run it with the server stopped
 * (DuckDB allows one process per file), or use `DELETE /api/usage/users/:id` on a running one.
 */
import { pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { parseUser, runCommand, withStore } from './export.js';
import { readStoreSettings } from './settings.js';

const usage = 'Usage: telemetry:erase --user <id>';

/** Runs the command; resolves to the process exit code. */
export async function main(
  args: string[],
  out: NodeJS.WritableStream = process.stdout,
  err: NodeJS.WritableStream = process.stderr,
): Promise<number> {
  let user: string;
  try {
    const { values } = parseArgs({ args, options: { user: { type: 'string' } }, strict: true });
    if (values.user === undefined) throw new Error('--user is required.');
    user = parseUser(values.user);
    readStoreSettings();
  } catch (error) {
    err.write(`${(error as Error).message}\n${usage}\n`);
    return 2;
  }
  return withStore(err, async (store) => {
    const erased = await store.erase(user);
    out.write(`Erased ${erased} ${erased === 1 ? 'item' : 'items'} of user ${user}.\n`);
  });
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) runCommand(main);

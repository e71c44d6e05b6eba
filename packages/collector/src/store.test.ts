import { existsSync, readdirSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { validateEnvelope, type TelemetryItem } from './contracts.js';
import { Journal } from './journal.js';
import { packItems } from './packed.js';
import { openStore, openWritableStore, storeFile } from './store.js';
import { browserBatch } from './test-support/browser-envelopes.js';
import { tempDataDir } from './test-support/server.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const items = (n: number): TelemetryItem[] =>
  browserBatch(n).map((e) => {
    const result = validateEnvelope(e, () => true);
    if (!result.ok) throw new Error(result.message);
    return result.item;
  });

const walBytes = (dataDir: string) =>
  statSync(`${storeFile(dataDir)}.wal`, { throwIfNoEntry: false })?.size ?? 0;

it('checkpoints its WAL once writes pause', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openWritableStore(dataDir, {
    idleCheckpoint: { idleMs: 100, minWalBytes: 1, everyMs: 50 },
  });
  await store.append(items(100));
  await store.flush();
  expect(walBytes(dataDir)).toBeGreaterThan(0);
  const deadline = Date.now() + 5000;
  while (walBytes(dataDir) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(walBytes(dataDir)).toBe(0);
  expect(await store.count()).toBe(100);
  await store.close();
});

it('lets overlapping appends through, and keeps them across a reopen', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openStore(dataDir);
  await Promise.all([store.append(items(10)), store.append(items(20)), store.append(items(30))]);
  expect(await store.count()).toBe(60);
  await store.close();
  // Everything loaded at close, so no journal is left behind.
  expect(readdirSync(path.join(dataDir, 'journal'))).toEqual([]);
  const reopened = await openStore(dataDir);
  expect(await reopened.count()).toBe(60);
  await reopened.close();
  expect(existsSync(storeFile(dataDir))).toBe(true);
});

it('stores every column exactly, in order, whatever characters and numbers the items hold', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openStore(dataDir);
  const base = items(7);
  const odd: TelemetryItem[] = [
    // The packing's own separators and escape character in columns (escaped rows), and a lone
    // surrogate escape in the envelope's text.
    { ...base[0]!, name: 'a\u001fb\u001ec\u0000', url: '\u001b0\u001be\u001b', envelope: '{"x":"\\ud800"}' },
    { ...base[1]!, message: '\u001c\u001d\u0000\u001b4', topFrame: '\u0000', target: '' },
    { ...base[2]!, durationMs: Infinity, success: true, message: '', name: '\u001b' },
    { ...base[3]!, durationMs: -0, success: false, resultCode: 'ünïcødé ✓ 𝄞' },
    { ...base[4]!, durationMs: 5e-324, envelope: '{"unterminated' },
  ];
  const all = [
    ...base.slice(0, 3),
    odd[0]!,
    ...base.slice(3, 5),
    odd[1]!,
    odd[2]!,
    ...base.slice(5),
    odd[3]!,
  ];
  await store.append(all);
  await store.append([base[6]!, odd[4]!]);
  expect(await store.count()).toBe(all.length + 2);
  await store.close();
  expect(await storedRows(dataDir)).toEqual(rowsOf([...all, base[6]!, odd[4]!]));
});

it('escapes the columns of validated items whose envelope has control characters as \\u escapes', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openWritableStore(dataDir);
  const envelopes = browserBatch(3);
  const trace = {
    ...envelopes[0]!,
    data: { baseType: 'MessageData', baseData: { ver: 2, message: 'a\u001eb\u001fc\u0000d' } },
  };
  const validated = [trace, ...envelopes].map((e) => {
    const result = validateEnvelope(e, () => true, { text: JSON.stringify(e) });
    if (!result.ok) throw new Error(result.message);
    return result.item;
  });
  expect(validated[0]?.message).toBe('a\u001eb\u001fc\u0000d');
  await store.append(packItems(validated, true));
  await store.close();
  expect(await storedRows(dataDir)).toEqual(rowsOf(validated));
});

it('loads every item exactly once while appends and loads overlap', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openWritableStore(dataDir, {
    load: { rows: 500, idleMs: 3_600_000, maxLagMs: 3_600_000 },
  });
  const sample = items(200);
  let appended = 0;
  let lowest = 0;
  const writer = async (seed: number) => {
    for (let i = 0; i < 25; i++) {
      const n = 20 + ((seed * 37 + i * 11) % 150);
      await store.append(sample.slice(0, n));
      appended += n;
      lowest = Math.min(lowest, store.pending());
    }
  };
  const writers = Promise.all(Array.from({ length: 8 }, (_, seed) => writer(seed)));
  // Reads meanwhile load everything appended before them.
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setTimeout(r, 30));
    const before = appended;
    expect(await store.count()).toBeGreaterThanOrEqual(before);
  }
  await writers;
  expect(lowest).toBeGreaterThanOrEqual(0);
  expect(await store.count()).toBe(appended);
  expect(store.pending()).toBe(0);
  await store.close();
});

it('turns the JSON envelope column of an older store into text, keeping its rows', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const [old, added] = items(2);
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(storeFile(dataDir));
  const c = await instance.connect();
  await c.run(`CREATE TABLE items (time TIMESTAMP NOT NULL, type VARCHAR NOT NULL, ikey VARCHAR NOT NULL,
    name VARCHAR, url VARCHAR, session_id VARCHAR, user_id VARCHAR, auth_user_id VARCHAR, operation_id VARCHAR,
    duration_ms DOUBLE, success BOOLEAN, result_code VARCHAR, target VARCHAR, message VARCHAR,
    problem_id VARCHAR, top_frame VARCHAR, envelope JSON NOT NULL)`);
  const [first] = rowsOf([old!]);
  await c.run(
    `INSERT INTO items VALUES (epoch_ms($1::BIGINT), ${Array.from({ length: 16 }, (_, k) => `$${k + 2}`).join(', ')})`,
    first!.map((v) => (typeof v === 'bigint' ? Number(v) : v)),
  );
  c.closeSync();
  instance.closeSync();

  const store = await openStore(dataDir);
  const lone = { ...added!, envelope: '{"x":"\\ud800"}' }; // Refused by a JSON column, fine as text.
  await store.append([lone]);
  await store.close();
  expect(await storedRows(dataDir)).toEqual(rowsOf([old!, lone]));
});

it('refuses an item whose time it cannot hold, storing nothing of that append', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openStore(dataDir);
  const [good, bad] = items(2);
  await expect(store.append([good!, { ...bad!, time: NaN }])).rejects.toThrow('Item time NaN is not a time');
  await expect(store.append([{ ...bad!, time: 1e20 }])).rejects.toThrow('is not a time the store can hold');
  expect(await store.count()).toBe(0);
  await store.close();
});

/** Every column of every row, as DuckDB holds them. */
async function storedRows(dataDir: string): Promise<unknown[][]> {
  const { DuckDBInstance } = await import('@duckdb/node-api');
  const instance = await DuckDBInstance.create(storeFile(dataDir), { access_mode: 'READ_ONLY' });
  const c = await instance.connect();
  const rows = (
    await c.runAndReadAll(
      `SELECT epoch_ms(time), type, ikey, name, url, session_id, user_id, auth_user_id, operation_id,
        duration_ms, success, result_code, target, message, problem_id, top_frame, envelope::VARCHAR FROM items`,
    )
  ).getRows();
  c.closeSync();
  instance.closeSync();
  return rows;
}

const rowsOf = (stored: TelemetryItem[]) =>
  stored.map((i) => [
    BigInt(i.time),
    i.type,
    i.iKey,
    i.name,
    i.url,
    i.sessionId,
    i.userId,
    i.authUserId,
    i.operationId,
    i.durationMs,
    i.success,
    i.resultCode,
    i.target,
    i.message,
    i.problemId,
    i.topFrame,
    i.envelope,
  ]);

/** Items as the collector packs them: plain rows, and an escaped one. */
function packedAndOdd(): TelemetryItem[] {
  const base = items(5);
  return [...base.slice(0, 2), { ...base[2]!, name: 'a\u001fb', durationMs: -Infinity }, ...base.slice(3)];
}

it('loads what a crash left in the journal when it opens, exactly once', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const journalDir = path.join(dataDir, 'journal');
  const appended = packedAndOdd();
  // What a run that crashed leaves: a segment after any the store has seen, never loaded.
  let run = 0;
  const crashed = async () => {
    const journal = await Journal.open(journalDir, { segment: 1000 * ++run, offset: 0 }, () => undefined);
    await journal.append(packItems(appended).chunks);
    await journal.close();
  };
  await crashed();
  const warnings: string[] = [];
  const store = await openStore(dataDir, { warn: (m) => warnings.push(m) });
  expect(await store.count()).toBe(5);
  await store.close();
  expect(warnings).toEqual(['journal: loaded 5 items a previous run had not loaded']);
  expect(await storedRows(dataDir)).toEqual(rowsOf(appended));

  // Once loaded, a segment is not loaded again, whether it is still there (as after a crash right
  // after a load's commit) or deleted; a second crash's segment is loaded once, too.
  await crashed();
  expect(readdirSync(journalDir)).toHaveLength(1);
  for (let open = 0; open < 2; open++) {
    const reopened = await openWritableStore(dataDir);
    expect(await reopened.count()).toBe(10);
    await reopened.close();
  }
  expect(readdirSync(journalDir)).toEqual([]);
  expect(await storedRows(dataDir)).toEqual(rowsOf([...appended, ...appended]));
});

it('loads journaled items once a row group is waiting, after a pause, or before any read', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const until = async (done: () => boolean) => {
    const deadline = Date.now() + 5000;
    while (!done() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    return done();
  };
  const never = 3_600_000;
  const byRows = await openWritableStore(dataDir, { load: { rows: 30, idleMs: never, maxLagMs: never } });
  await byRows.append(items(20));
  expect(byRows.pending()).toBe(20);
  await byRows.append(items(20));
  // Whole row groups only: 30 of the 40, and the rest waits.
  expect(await until(() => byRows.pending() === 10)).toBe(true);
  await new Promise((r) => setTimeout(r, 200));
  expect(byRows.pending()).toBe(10);
  expect(await byRows.count()).toBe(40);
  await byRows.close();

  const byPause = await openWritableStore(dataDir, { load: { rows: 1e9, idleMs: 100, maxLagMs: never } });
  await byPause.append(items(10));
  expect(byPause.pending()).toBe(10);
  expect(await until(() => byPause.pending() === 0)).toBe(true);
  await byPause.close();

  const byRead = await openWritableStore(dataDir, { load: { rows: 1e9, idleMs: never, maxLagMs: never } });
  await byRead.append(items(7));
  await new Promise((r) => setTimeout(r, 200));
  expect(byRead.pending()).toBe(7);
  expect(await byRead.count()).toBe(57);
  expect(byRead.pending()).toBe(0);
  await byRead.close();
});

import { existsSync, rmSync, statSync } from 'node:fs';
import { afterEach, expect, it } from 'vitest';
import { validateEnvelope, type TelemetryItem } from './contracts.js';
import { openStore, storeFile } from './store.js';
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
  const store = await openStore(dataDir, { idleCheckpoint: { idleMs: 100, minWalBytes: 1, everyMs: 50 } });
  await store.append(items(100));
  expect(walBytes(dataDir)).toBeGreaterThan(0);
  const deadline = Date.now() + 5000;
  while (walBytes(dataDir) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  expect(walBytes(dataDir)).toBe(0);
  expect(await store.count()).toBe(100);
  await store.close();
});

it('lets overlapping appends through one at a time, and refuses writes when read-only', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openStore(dataDir);
  await Promise.all([store.append(items(10)), store.append(items(20)), store.append(items(30))]);
  expect(await store.count()).toBe(60);
  await store.close();
  const readonly = await openStore(dataDir, { readonly: true });
  await expect(readonly.append(items(1))).rejects.toThrow('opened read-only');
  await expect(readonly.prune(Date.now())).rejects.toThrow('opened read-only');
  expect(await readonly.count()).toBe(60);
  await readonly.close();
  expect(existsSync(storeFile(dataDir))).toBe(true);
});

it('stores every column exactly, in order, whether an item is packed, odd or refused by the bulk insert', async () => {
  const dataDir = tempDataDir();
  dirs.push(dataDir);
  const store = await openStore(dataDir);
  const base = items(7);
  const odd: TelemetryItem[] = [
    // A lone surrogate escape, which DuckDB's JSON check refuses, and separators in a column.
    { ...base[0]!, name: 'a\u001fb\u001ec\u0000', envelope: '{"x":"\\ud800"}' },
    { ...base[1]!, durationMs: Infinity, success: true, message: '' },
  ];
  // Text DuckDB's JSON check refuses although nothing marks it odd: the batch goes again through the appender.
  const refused: TelemetryItem = { ...base[2]!, envelope: '{"unterminated' };
  const all = [...base.slice(0, 3), odd[0]!, ...base.slice(3, 5), odd[1]!, ...base.slice(5)];
  await store.append(all);
  await store.append([base[6]!, refused]);
  expect(await store.count()).toBe(all.length + 2);
  await store.close();

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
  const expected = [...all, base[6]!, refused].map((i) => [
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
  expect(rows).toEqual(expected);
});

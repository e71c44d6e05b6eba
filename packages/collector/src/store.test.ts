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

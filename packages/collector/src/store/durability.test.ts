/**
 * The durability promise, for real: a compiled collector in its own `node` process (ingest worker
 * included) answers batches while senders keep posting, is killed with SIGKILL right after an answer,
 * and every item it answered 200 for is in the store when it is reopened. Also runs the compiled
 * export command against that store, as `npm run telemetry:export` will.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { rmSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { beforeAll, expect, it } from 'vitest';
import type { BreezeResponse } from '../http/collector.js';
import { openStore } from './store.js';
import { browserBatch, browserContext } from '../test-support/browser-envelopes.js';
import { compilePackage, type CompiledPackage } from '../test-support/compile.js';
import { tempDataDir } from '../test-support/server.js';

let build: CompiledPackage;
beforeAll(() => {
  build = compilePackage();
}, 120_000);

async function startChild(
  dataDir: string,
): Promise<{ child: ChildProcess; exited: Promise<unknown>; origin: string }> {
  const child = spawn(
    process.execPath,
    [path.join(build.dir, 'test-support', 'collector-child.js'), dataDir],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  const exited = once(child, 'exit'); // Listen now: the exit may come before anyone awaits it.
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  if (!child.stdout) throw new Error('no stdout');
  const lines = createInterface({ input: child.stdout });
  const [first] = (await Promise.race([
    once(lines, 'line'),
    exited.then(() => {
      throw new Error(`collector child exited: ${stderr}`);
    }),
  ])) as [string];
  const { port } = JSON.parse(first) as { port: number };
  return { child, exited, origin: `http://127.0.0.1:${port}` };
}

function exportCli(dataDir: string, ...args: string[]) {
  return spawnSync(process.execPath, [path.join(build.dir, 'cli', 'export.js'), ...args], {
    env: { ...process.env, GATEHOUSE_DATA_DIR: dataDir },
    encoding: 'utf8',
  });
}

it('loses no answered item when the server is SIGKILLed right after an answer', async () => {
  const dataDir = tempDataDir();
  try {
    const { child, exited, origin } = await startChild(dataDir);

    // While the server holds the store, the export command says so instead of failing obscurely.
    const locked = exportCli(dataDir);
    expect(locked.status).toBe(1);
    expect(locked.stderr).toContain('is in use by another process');

    const BATCH = 25;
    const answered = new Set<string>();
    let next = 0;
    let killed = false;
    const sender = async () => {
      while (!killed) {
        const operationId = `batch-${next++}`;
        const body = JSON.stringify(browserBatch(BATCH, browserContext({ operationId })));
        try {
          const res = await fetch(`${origin}/v2/track`, {
            method: 'POST',
            body,
            headers: { 'Content-Type': 'application/json' },
          });
          const answer = (await res.json()) as BreezeResponse;
          if (res.status === 200 && answer.itemsAccepted === BATCH) answered.add(operationId);
          // Kill right after the 40th answer, with the other senders' batches still in flight.
          if (answered.size >= 40 && !killed) {
            killed = true;
            child.kill('SIGKILL');
          }
        } catch {
          return; // The connection died with the server.
        }
      }
    };
    await Promise.all(Array.from({ length: 6 }, sender));
    await exited;
    expect(child.signalCode).toBe('SIGKILL');

    // The export command opens the store as the crash left it: the answered items were still only in
    // the journal (the senders never paused, so nothing was due to be loaded), and it loads them first.
    const exported = exportCli(dataDir, '--type', 'exception');
    expect(exported.status).toBe(0);
    expect(exported.stderr).toMatch(/journal: loaded \d+ items a previous run had not loaded/);
    const lines = exported.stdout
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as { data: { baseType: string } });
    expect(lines.length).toBeGreaterThanOrEqual(Math.floor(BATCH / 7) * answered.size);
    expect(lines.every((l) => l.data.baseType === 'ExceptionData')).toBe(true);

    // Reopened for writing, as the next server start would: every answered item is there.
    const store = await openStore(dataDir);
    const stored = new Map<string, number>();
    for await (const e of store.export()) {
      const op = e.tags?.['ai.operation.id'] ?? '';
      stored.set(op, (stored.get(op) ?? 0) + 1);
    }
    await store.close();
    expect(answered.size).toBeGreaterThanOrEqual(40);
    for (const op of answered) expect(stored.get(op), op).toBe(BATCH);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});

it('the compiled export command refuses bad arguments with exit code 2', () => {
  const result = exportCli('/nonexistent/gatehouse-data', '--type', 'pageviews');
  expect(result.status).toBe(2);
  expect(result.stderr).toContain("--type 'pageviews' is not one of");
  expect(result.stderr).toContain('Usage: telemetry:export');
});

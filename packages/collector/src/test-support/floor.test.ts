import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterEach, describe, expect, it } from 'vitest';
import { browserBatch } from './browser-envelopes.js';
import { openFloor, type Floor } from './floor.js';

let dir: string;
let floor: Floor | undefined;
let server: http.Server | undefined;

afterEach(async () => {
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await floor?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A floor in a new folder, served on 127.0.0.1. */
async function start(): Promise<Floor> {
  dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-floor-'));
  const opened = await openFloor(dir);
  floor = opened;
  server = http.createServer((req, res) => opened.handle(req, res));
  await new Promise<void>((resolve) => server?.listen(0, '127.0.0.1', resolve));
  return opened;
}

async function post(body: Buffer, headers: Record<string, string>) {
  const { port } = server?.address() as AddressInfo;
  const response = await fetch(`http://127.0.0.1:${port}/v2/track`, { method: 'POST', body, headers });
  return { status: response.status, answer: (await response.json()) as Record<string, unknown> };
}

describe('the floor (what the collector bench compares the collector with)', () => {
  it('answers each body once its items are in the journal, JSON arrays and gzip NDJSON alike', async () => {
    const opened = await start();

    const array = browserBatch(3);
    const lines = browserBatch(2);
    await expect(
      post(Buffer.from(JSON.stringify(array)), { 'Content-Type': 'application/json' }),
    ).resolves.toEqual({ status: 200, answer: { itemsReceived: 3, itemsAccepted: 3, errors: [] } });
    await expect(
      post(gzipSync(lines.map((item) => JSON.stringify(item)).join('\n')), {
        'Content-Type': 'application/x-json-stream',
        'Content-Encoding': 'gzip',
      }),
    ).resolves.toMatchObject({ status: 200, answer: { itemsAccepted: 2 } });
    expect(opened.stored).toBe(5);

    const journal = readdirSync(dir)
      .map((name) => readFileSync(path.join(dir, name), 'utf8'))
      .join('');
    for (const item of [...array, ...lines]) expect(journal).toContain(JSON.stringify(item));
  });

  it('refuses a body that is not JSON, and journals nothing for it', async () => {
    const opened = await start();
    const { port } = server?.address() as AddressInfo;
    const response = await fetch(`http://127.0.0.1:${port}/v2/track`, { method: 'POST', body: 'not json' });
    expect(response.status).toBe(400);
    expect(opened.stored).toBe(0);
  });
});

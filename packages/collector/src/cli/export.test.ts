import { rmSync, statSync } from 'node:fs';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { main as erase } from './erase.js';
import { main, parseExportArgs } from './export.js';
import { readStoreSettings } from './settings.js';
import { Journal } from '../store/journal.js';
import { packItems, RS } from '../protocol/packed.js';
import { openStore, rejectedFile } from '../store/store.js';
import { validateEnvelope, type TelemetryItem } from '../protocol/envelopes.js';
import { browserBatch, browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import { tempDataDir } from '../test-support/server.js';

function capture() {
  const stream = new PassThrough();
  let text = '';
  stream.on('data', (chunk: Buffer) => (text += chunk.toString()));
  return { stream, text: () => text };
}

async function run(args: string[]) {
  const out = capture();
  const err = capture();
  const code = await main(args, out.stream, err.stream);
  return { code, stdout: out.text(), stderr: err.text() };
}

const item = (envelope: unknown): TelemetryItem => {
  const result = validateEnvelope(envelope, () => true);
  if (!result.ok) throw new Error(result.message);
  return result.item;
};

const ndjson = (text: string) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => JSON.parse(l) as unknown);

const dirs: string[] = [];
afterEach(() => {
  vi.unstubAllEnvs();
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe('parseExportArgs', () => {
  it('reads --since and --type', () => {
    expect(parseExportArgs([])).toEqual({});
    expect(parseExportArgs(['--since', '2026-01-01T00:00:00Z', '--type', 'pageview'])).toEqual({
      since: new Date('2026-01-01T00:00:00Z'),
      type: 'pageview',
    });
    expect(parseExportArgs(['--type=pageviewperformance']).type).toBe('pageviewperformance');
  });

  it('explains what is wrong', () => {
    expect(() => parseExportArgs(['--since', 'last tuesday'])).toThrow(
      "--since 'last tuesday' is not an ISO 8601 time.",
    );
    expect(() => parseExportArgs(['--type', 'views'])).toThrow(
      "--type 'views' is not one of pageview, exception",
    );
    expect(() => parseExportArgs(['--limit', '3'])).toThrow(/Unknown option '--limit'/);
    expect(() => parseExportArgs(['pageview'])).toThrow(/Unexpected argument 'pageview'/);
    expect(() => parseExportArgs(['--since'])).toThrow(/argument missing/);
  });
});

describe('telemetry:export', () => {
  it('prints the stored envelopes as NDJSON, filtered', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const old = { ...browserEnvelope('pageview'), time: '2020-05-01T00:00:00.000Z' };
    const batch = [old, ...browserBatch(14)];
    const store = await openStore(dataDir);
    await store.append(batch.map(item));
    await store.close();
    vi.stubEnv('GATEHOUSE_DATA_DIR', dataDir);

    const all = await run([]);
    expect(all.code).toBe(0);
    expect(ndjson(all.stdout)).toEqual(batch);

    const recentViews = await run(['--since', '2025-01-01T00:00:00Z', '--type', 'pageview']);
    const lines = recentViews.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(
      lines.every((l) => (JSON.parse(l) as { data: { baseType: string } }).data.baseType === 'PageviewData'),
    ).toBe(true);
  });

  it('exits 2 with the usage on bad arguments, 1 without a store', async () => {
    const bad = await run(['--type', 'nope']);
    expect(bad).toMatchObject({ code: 2, stdout: '' });
    expect(bad.stderr).toContain('Usage: telemetry:export [--since <ISO time>] [--type pageview|exception|');

    const dataDir = tempDataDir();
    dirs.push(dataDir);
    vi.stubEnv('GATEHOUSE_DATA_DIR', dataDir);
    const missing = await run([]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain(`No telemetry store in ${dataDir}`);
  });

  it('reads GATEHOUSE_DATA_DIR as every process does: blank is unset, so the default folder', () => {
    expect(readStoreSettings({ GATEHOUSE_DATA_DIR: '   ' }).dataDir).toBe(path.resolve('./data'));
    expect(readStoreSettings({ GATEHOUSE_DATA_DIR: 'store' }).dataDir).toBe(path.resolve('store'));
  });
});

describe('telemetry:export on a data folder whose journal holds a record that cannot be loaded', () => {
  it('moves the record aside, says where, and exports the rest', async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const batch = browserBatch(4);
    const store = await openStore(dataDir);
    await store.append(batch.slice(0, 2).map(item));
    await store.close();
    // Written straight into a journal segment, as an older version could leave it: 9 MiB in one row.
    const journal = await Journal.open(
      path.join(dataDir, 'journal'),
      { segment: 1000, offset: 0 },
      () => undefined,
    );
    await journal.append([...packItems(batch.slice(2, 3).map(item)).chunks, `${'x'.repeat(9 << 20)}${RS}`]);
    await journal.append(packItems(batch.slice(3).map(item)).chunks);
    await journal.close();
    vi.stubEnv('GATEHOUSE_DATA_DIR', dataDir);
    const warn = vi.spyOn(console, 'warn').mockImplementation(() => undefined);

    const all = await run([]);
    expect(all.code).toBe(0);
    expect(ndjson(all.stdout)).toEqual(batch);
    expect(warn.mock.calls.flat().join('\n')).toContain(`moved aside to ${rejectedFile(dataDir)}`);
    expect(statSync(rejectedFile(dataDir)).size).toBe((9 << 20) + 1);
  });
});

describe('telemetry:export --user and telemetry:erase --user', () => {
  it("exports one user's items, then erases them and nobody else's", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const of = (authUserId: string) => browserBatch(3, browserContext({ authUserId }));
    const [alice, bob] = [of('alice-pseudonym'), of('bob-pseudonym')];
    const store = await openStore(dataDir);
    await store.append([...alice, ...bob].map(item));
    await store.close();
    vi.stubEnv('GATEHOUSE_DATA_DIR', dataDir);

    const exported = await run(['--user', 'alice-pseudonym']);
    expect(exported.code).toBe(0);
    expect(ndjson(exported.stdout)).toEqual(alice);

    const out = capture();
    const err = capture();
    expect(await erase(['--user', 'alice-pseudonym'], out.stream, err.stream)).toBe(0);
    expect(out.text()).toBe('Erased 3 items of user alice-pseudonym.\n');
    expect((await run(['--user', 'alice-pseudonym'])).stdout).toBe('');
    expect((await run([])).stdout.trimEnd().split('\n')).toHaveLength(3);

    expect(await erase([], out.stream, err.stream)).toBe(2);
    expect(await erase(['--user', ' '], out.stream, err.stream)).toBe(2);
    expect(err.text()).toContain('--user is required.\nUsage: telemetry:erase --user <id>');
    expect(parseExportArgs(['--user', 'x'])).toEqual({ user: 'x' });
  });

  it("exports the annotations the user wrote, never others'; erasure keeps the notes, not the author", async () => {
    const dataDir = tempDataDir();
    dirs.push(dataDir);
    const alice = browserBatch(2, browserContext({ authUserId: 'alice-pseudonym' }));
    const store = await openStore(dataDir);
    await store.append(alice.map(item));
    const hers = await store.annotations.addAnnotation({
      time: '2026-11-20T10:00:00.000Z',
      note: 'Release 2.4',
      author: 'alice-pseudonym',
    });
    await store.annotations.addAnnotation({
      time: '2026-11-20T11:00:00.000Z',
      note: "Bob's incident",
      author: 'bob-pseudonym',
    });
    await store.close();
    vi.stubEnv('GATEHOUSE_DATA_DIR', dataDir);

    const { id, time, note, createdAt } = hers;
    expect(ndjson((await run(['--user', 'alice-pseudonym'])).stdout)).toEqual([
      ...alice,
      { annotation: { id, time, note, createdAt } },
    ]);
    // Items of one kind, or since a later time: no annotation line.
    expect(
      ndjson((await run(['--user', 'alice-pseudonym', '--type', 'pageview'])).stdout),
    ).not.toContainEqual(expect.objectContaining({ annotation: expect.anything() as unknown }));
    expect(
      ndjson((await run(['--user', 'alice-pseudonym', '--since', '2026-11-20T10:30:00Z'])).stdout),
    ).toEqual(alice);

    const out = capture();
    expect(await erase(['--user', 'alice-pseudonym'], out.stream, capture().stream)).toBe(0);
    expect((await run(['--user', 'alice-pseudonym'])).stdout).toBe('');
    const reopened = await openStore(dataDir);
    const notes = (await reopened.annotations.listAnnotations({ from: time, to: '2026-11-21T00:00:00Z' }))
      .annotations;
    await reopened.close();
    expect(notes.map((a) => [a.note, a.author])).toEqual([
      ['Release 2.4', null],
      ["Bob's incident", 'bob-pseudonym'],
    ]);
  });
});

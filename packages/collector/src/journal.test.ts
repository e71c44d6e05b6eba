import { appendFileSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Journal, RecordKind, type JournalRecord } from './journal.js';
import { tempDataDir } from './test-support/server.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

const record = (text: string, kind: RecordKind = RecordKind.Rows): JournalRecord => ({
  kind,
  payload: new TextEncoder().encode(text),
});
const texts = (records: JournalRecord[]) =>
  records.map((r) => `${r.kind}:${Buffer.from(r.payload).toString()}`);

function journalDir(): string {
  const dir = tempDataDir();
  dirs.push(dir);
  return path.join(dir, 'journal');
}

it('gives back what was appended, by segment, once rotate has ended one', async () => {
  const dir = journalDir();
  const { journal } = await Journal.open(dir, 0, () => undefined);
  let durable = 0;
  await journal.append([record('a'), record('b', RecordKind.Items)], () => durable++);
  expect(durable).toBe(1);
  expect(await journal.rotate()).toBe(1);
  await journal.append([record('c')]);
  await journal.close();

  const reopened = await Journal.open(dir, 0, () => undefined);
  expect(reopened.segments.map((s) => [s.id, texts(s.records)])).toEqual([
    [1, ['1:a', '2:b']],
    [2, ['1:c']],
  ]);
  // New appends go after the last segment, never into one already there.
  await reopened.journal.append([record('d')]);
  expect(await reopened.journal.rotate()).toBe(3);
  await reopened.journal.drop(2);
  expect(readdirSync(dir)).toEqual(['segment-000000000003.log']);
  await reopened.journal.close();
});

it('deletes segments already loaded, and stops a segment at an unfinished write', async () => {
  const dir = journalDir();
  const { journal } = await Journal.open(dir, 0, () => undefined);
  await journal.append([record('loaded')]);
  await journal.rotate();
  await journal.append([record('kept'), record('also kept')]);
  await journal.close();
  const second = path.join(dir, 'segment-000000000002.log');
  const whole = statSync(second).size;
  // A crash in the middle of a write: a header promising more than is there.
  appendFileSync(second, Buffer.from([0x47, 0x48, 0x4a, 0x31, 1, 0, 0, 0, 200, 0, 0, 0, 1, 2, 3, 4, 5]));

  const warnings: string[] = [];
  const reopened = await Journal.open(dir, 1, (m) => warnings.push(m));
  expect(reopened.segments.map((s) => [s.id, texts(s.records)])).toEqual([[2, ['1:kept', '1:also kept']]]);
  expect(readdirSync(dir)).toEqual(['segment-000000000002.log']);
  expect(statSync(second).size).toBe(whole);
  expect(warnings).toEqual([
    'journal: segment-000000000002.log ends in 17 bytes of an unfinished write; dropped',
  ]);
  await reopened.journal.close();
});

it('stops at a record whose checksum does not match', async () => {
  const dir = journalDir();
  const { journal } = await Journal.open(dir, 0, () => undefined);
  await journal.append([record('first'), record('second')]);
  await journal.close();
  const file = path.join(dir, 'segment-000000000001.log');
  // Flip the last byte: the second record's payload.
  const bytes = readFileSync(file);
  bytes[bytes.length - 1] ^= 0xff;
  writeFileSync(file, bytes);
  const warnings: string[] = [];
  const reopened = await Journal.open(dir, 0, (m) => warnings.push(m));
  expect(reopened.segments.map((s) => texts(s.records))).toEqual([['1:first']]);
  expect(warnings).toHaveLength(1);
  await reopened.journal.close();
});

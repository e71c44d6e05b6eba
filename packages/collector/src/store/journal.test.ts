import { appendFileSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { Journal, wholeAppends } from './journal.js';
import { tempDataDir } from '../test-support/server.js';

const dirs: string[] = [];
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function journalDir(): string {
  const dir = tempDataDir();
  dirs.push(dir);
  return path.join(dir, 'journal');
}
const quiet = () => undefined;
const start = { segment: 0, offset: 0 };
const segment = (dir: string, id: number) => path.join(dir, `segment-${String(id).padStart(12, '0')}.log`);

it('writes each append as its rows and a trailer, and starts a segment once one is full', async () => {
  const dir = journalDir();
  const journal = await Journal.open(dir, start, quiet, 20);
  let durable = 0;
  await journal.append(['a\u001fb\u001e', 'c\u001e'], () => durable++);
  expect(durable).toBe(1);
  await journal.append(['é\u001e']); // Now past 20 bytes: the next append starts segment 2.
  await journal.append(['d\u001e']);
  expect(journal.segments()).toEqual([
    { id: 1, size: 33, open: false },
    { id: 2, size: 14, open: true },
  ]);
  await journal.close();

  // Byte lengths (é is two bytes in UTF-8) and CRC-32s of each append's rows.
  expect(readFileSync(segment(dir, 1), 'utf8')).toBe(
    'a\u001fb\u001ec\u001e\u001d6:a392c9fa\u001eé\u001e\u001d3:e962cbc8\u001e',
  );
  const reopened = await Journal.open(dir, { segment: 1, offset: 10 }, quiet);
  expect(reopened.segments()).toEqual([
    { id: 1, size: 33, open: false },
    { id: 2, size: 14, open: false },
  ]);
  // New appends go after the last segment, never into one already there.
  await reopened.append(['e\u001e']);
  expect(reopened.segments().map((s) => s.id)).toEqual([1, 2, 3]);
  // The open segment stays, whatever has been loaded.
  await reopened.drop(4);
  expect(readdirSync(dir)).toEqual(['segment-000000000003.log']);
  await reopened.close();
});

it('deletes segments already loaded, and cuts a segment after its last whole append', async () => {
  const dir = journalDir();
  const journal = await Journal.open(dir, start, quiet, 1);
  await journal.append(['loaded\u001e']);
  await journal.append(['kept\u001e']);
  await journal.close();
  const whole = statSync(segment(dir, 2)).size;
  // A crash in the middle of a write: rows without their trailer.
  appendFileSync(segment(dir, 2), 'half a r');

  const warnings: string[] = [];
  const reopened = await Journal.open(dir, { segment: 2, offset: 0 }, (m) => warnings.push(m));
  expect(reopened.segments()).toEqual([{ id: 2, size: whole, open: false }]);
  expect(readdirSync(dir)).toEqual(['segment-000000000002.log']);
  expect(statSync(segment(dir, 2)).size).toBe(whole);
  expect(warnings).toEqual([
    'journal: segment-000000000002.log ends in 8 bytes of an unfinished write; dropped',
  ]);
  await reopened.close();
});

it('stops at an append whose length or checksum does not hold', async () => {
  const dir = journalDir();
  const journal = await Journal.open(dir, start, quiet);
  await journal.append(['first\u001e']);
  await journal.append(['second\u001e']);
  await journal.close();
  const bytes = readFileSync(segment(dir, 1));
  const first = bytes.indexOf('second');
  expect(wholeAppends(bytes)).toBe(bytes.length);

  const flipped = Buffer.from(bytes);
  flipped[first] = 'S'.charCodeAt(0);
  expect(wholeAppends(flipped)).toBe(first);
  const shorter = Buffer.concat([bytes.subarray(0, first), Buffer.from('secon\u001e\u001d7:0\u001e')]);
  expect(wholeAppends(shorter)).toBe(first);
  expect(wholeAppends(Buffer.from('rows without a trailer\u001e'))).toBe(0);

  writeFileSync(segment(dir, 1), flipped);
  const warnings: string[] = [];
  const reopened = await Journal.open(dir, start, (m) => warnings.push(m));
  expect(readFileSync(segment(dir, 1))).toEqual(bytes.subarray(0, first));
  expect(reopened.segments()).toEqual([{ id: 1, size: first, open: false }]);
  expect(warnings).toHaveLength(1);
  await reopened.close();
});

import { rmSync } from 'node:fs';
import { afterEach, describe, expect, it } from 'vitest';
import { validateEnvelope, type TelemetryItem } from '../protocol/envelopes.js';
import { openWritableStore, type WritableStore } from './store.js';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import { tempDataDir } from '../test-support/server.js';

const dirs: string[] = [];
const stores: WritableStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close().catch(() => undefined);
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

async function open(dir = tempDataDir()) {
  if (!dirs.includes(dir)) dirs.push(dir);
  const store = await openWritableStore(dir, { compactEveryMs: 0 });
  stores.push(store);
  return { dir, store };
}

const HOUR = 3_600_000;
// 24 hours of 1-hour buckets end at the end of the current hour (bucketedPeriod).
const NOW = Date.parse('2026-11-20T12:30:00Z');
const at = (ms: number) => new Date(ms).toISOString();

describe('annotations in the store', () => {
  it("lists a chart period's annotations, oldest first, and none outside it", async () => {
    const { store } = await open();
    const a = store.annotations;
    const late = await a.addAnnotation({
      time: at(NOW - HOUR),
      note: '  Incident: login down  ',
      author: 'admin-1',
    });
    const early = await a.addAnnotation({
      time: at(NOW - 20 * HOUR),
      note: 'Release 2.4',
      author: 'admin-2',
    });
    await a.addAnnotation({ time: at(NOW - 25 * HOUR), note: 'Too old for the day', author: 'admin-1' });
    await a.addAnnotation({ time: at(NOW + HOUR), note: 'After the period', author: 'admin-1' });

    const day = await a.listAnnotations({ range: '24h', now: NOW });
    expect(day).toMatchObject({
      range: '24h',
      from: '2026-11-19T13:00:00.000Z',
      to: '2026-11-20T13:00:00.000Z',
    });
    expect(day.annotations).toEqual([early, late]);
    expect(late).toMatchObject({ note: 'Incident: login down', author: 'admin-1', time: at(NOW - HOUR) });
    expect(late.id).toMatch(/^[0-9a-f-]{36}$/);

    const custom = await a.listAnnotations({ from: at(NOW - 26 * HOUR), to: at(NOW - 10 * HOUR) });
    expect(custom.annotations.map((n) => n.note)).toEqual(['Too old for the day', 'Release 2.4']);
  });

  it('deletes one by id, and says when there is none', async () => {
    const { store } = await open();
    const a = store.annotations;
    const kept = await a.addAnnotation({ time: at(NOW), note: 'Kept', author: 'admin-1' });
    const gone = await a.addAnnotation({ time: at(NOW), note: 'Gone', author: 'admin-1' });
    expect(await a.deleteAnnotation(gone.id)).toEqual(gone);
    expect(await a.deleteAnnotation(gone.id)).toBeNull();
    expect((await a.listAnnotations({ range: '1h', now: NOW })).annotations).toEqual([kept]);
  });

  it('keeps them across a restart; an erasure of the author keeps the note and removes only that author', async () => {
    const { dir, store } = await open();
    const user = browserContext({ userId: 'anon-1', authUserId: 'admin-1' });
    const item = validateEnvelope(browserEnvelope('pageview', user), () => true) as {
      ok: true;
      item: TelemetryItem;
    };
    await store.append([item.item]);
    const mine = await store.annotations.addAnnotation({ time: at(NOW), note: 'Mine', author: 'admin-1' });
    const theirs = await store.annotations.addAnnotation({
      time: at(NOW),
      note: 'Theirs',
      author: 'admin-2',
    });
    expect(await store.annotations.annotationsBy('admin-1')).toEqual([mine]);

    expect(await store.erase('admin-1')).toBe(1);
    expect(await store.annotations.annotationsBy('admin-1')).toEqual([]);
    await store.close();
    stores.splice(stores.indexOf(store), 1);

    const reopened = (await open(dir)).store;
    expect((await reopened.annotations.listAnnotations({ range: '1h', now: NOW })).annotations).toEqual([
      { ...mine, author: null },
      theirs,
    ]);
  });

  it('refuses what the contract refuses, whoever asks (a replica over the internal API)', async () => {
    const { store } = await open();
    const a = store.annotations;
    const ok = { time: at(NOW), note: 'Fine', author: 'admin-1' };
    await expect(a.addAnnotation({ ...ok, note: 'x'.repeat(201) })).rejects.toThrow(RangeError);
    await expect(a.addAnnotation({ ...ok, note: '   ' })).rejects.toThrow(RangeError);
    await expect(a.addAnnotation({ ...ok, note: 'two\nlines' })).rejects.toThrow(RangeError);
    await expect(a.addAnnotation({ ...ok, time: 'yesterday' })).rejects.toThrow(RangeError);
    await expect(a.addAnnotation({ ...ok, author: "x' OR 1=1 --" })).rejects.toThrow(RangeError);
    await expect(a.deleteAnnotation('1 OR 1=1')).rejects.toThrow(RangeError);
    // Text is stored as given, quotes and markup included: it is shown as text, never as HTML.
    const markup = await a.addAnnotation({ ...ok, note: `<img src=x onerror=alert(1)> 'quoted' "too"` });
    expect((await a.listAnnotations({ range: '1h', now: NOW })).annotations).toEqual([markup]);
    expect(markup.note).toBe(`<img src=x onerror=alert(1)> 'quoted' "too"`);
  });
});

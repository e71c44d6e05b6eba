// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { daysPeriod, localDay, viewOf, viewParams } from './view-state';

const view = (search: string) => viewOf(new URLSearchParams(search));

describe('the view in the address', () => {
  it('reads the range, the figure and the segment, and writes them back the same', () => {
    const read = view('range=7d&figure=pageViews&device=mobile&role=admin');
    expect(read).toEqual({
      period: { range: '7d' },
      figure: 'pageViews',
      segment: { device: 'mobile', role: 'admin' },
    });
    expect(viewParams(read).toString()).toBe('range=7d&figure=pageViews&role=admin&device=mobile');
  });

  it('leaves the defaults out, and falls back to them for what it does not understand', () => {
    expect(view('')).toEqual({ period: { range: '24h' }, figure: 'users', segment: {} });
    expect(view('range=2y&figure=revenue&device=toaster')).toEqual(view(''));
    expect(viewParams(view('')).toString()).toBe('');
    expect(viewParams(view('device=mobile')).toString()).toBe('device=mobile');
  });

  it('reads a custom period, preferring it to a range, and only when it is one', () => {
    const custom = view('range=7d&from=2026-11-01T00:00:00Z&to=2026-11-08T00:00:00.000Z');
    expect(custom.period).toEqual({ from: '2026-11-01T00:00:00.000Z', to: '2026-11-08T00:00:00.000Z' });
    expect(viewParams(custom).toString()).toBe(
      'from=2026-11-01T00%3A00%3A00.000Z&to=2026-11-08T00%3A00%3A00.000Z',
    );
    // Backwards, half given, or not a time: the range.
    expect(view('range=7d&from=2026-11-08T00:00:00Z&to=2026-11-01T00:00:00Z').period).toEqual({
      range: '7d',
    });
    expect(view('from=2026-11-01T00:00:00Z').period).toEqual({ range: '24h' });
    expect(view('from=yesterday&to=today').period).toEqual({ range: '24h' });
  });
});

describe('daysPeriod', () => {
  it('runs from the first day’s local midnight to the midnight after the last', () => {
    const period = daysPeriod('2026-11-20', '2026-11-22');
    expect(period).toEqual({
      from: new Date(2026, 10, 20).toISOString(),
      to: new Date(2026, 10, 23).toISOString(),
    });
    expect(localDay(period?.from ?? '')).toBe('2026-11-20');
    // One day is a period too.
    expect(daysPeriod('2026-11-20', '2026-11-20')?.to).toBe(new Date(2026, 10, 21).toISOString());
  });

  it('is null for a last day before the first, or a value that is not a day', () => {
    expect(daysPeriod('2026-11-22', '2026-11-20')).toBeNull();
    expect(daysPeriod('', '2026-11-20')).toBeNull();
  });
});

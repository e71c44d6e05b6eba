import { afterEach, describe, expect, it } from 'vitest';
import { UnsentEvents } from './unsent-events';

const KEY = 'gatehouse.telemetry.unsent-events';
const event = (outcome: string) => ({ name: 'gatehouse.sign-in', properties: { outcome }, measurements: {} });

describe('UnsentEvents', () => {
  afterEach(() => sessionStorage.clear());

  it('takes up well-formed events only, at most its limit, and tolerates storage that is not JSON', () => {
    sessionStorage.setItem(
      KEY,
      JSON.stringify([
        event('started'),
        { name: 'x', properties: { outcome: 1 }, measurements: {} },
        { name: 'y', properties: {}, measurements: { durationMs: 'slow' } },
        { name: 'z', properties: [], measurements: {} },
        event('returned'),
        event('failed'),
      ]),
    );
    const earlier = new UnsentEvents(2);
    expect(earlier.takeEarlier()).toEqual([event('started'), event('returned')]);
    // Once: they are queued, and still kept until sent.
    expect(earlier.takeEarlier()).toEqual([]);
    expect(new UnsentEvents(2).takeEarlier()).toHaveLength(2);
    sessionStorage.setItem(KEY, '{not json');
    expect(new UnsentEvents(2).takeEarlier()).toEqual([]);
  });

  it('keeps up to its limit, and removes an event once sent, the key with the last', () => {
    const events = new UnsentEvents(2);
    const [a, b, c] = [event('a'), event('b'), event('c')];
    events.keep(a);
    events.keep(b);
    events.keep(c);
    expect(new UnsentEvents(5).takeEarlier()).toEqual([a, b]);
    events.sent(a);
    expect(new UnsentEvents(5).takeEarlier()).toEqual([b]);
    events.sent(b);
    expect(sessionStorage.getItem(KEY)).toBeNull();
  });
});

import { render } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { ApiQuery } from '../../auth/use-api';
import { Panel } from './panel';
import { SettledReports, useScrollToSectionOnLoad } from './settled';

type Query = ApiQuery<number[]> & { reload: () => void };
const loading: Query = { status: 'loading', reload: vi.fn() };
const ready: Query = { status: 'ready', data: [1], reload: vi.fn() };

/** A page of two panels, as the dashboard lays them out: the second is the section linked to. */
function Page({ first, second }: { first: Query; second: Query }) {
  const report = useScrollToSectionOnLoad();
  return (
    <SettledReports value={report}>
      <Panel title="First" query={first} isEmpty={() => false}>
        {(data) => data.join(',')}
      </Panel>
      <Panel id="second" title="Second" query={second} isEmpty={() => false}>
        {(data) => data.join(',')}
      </Panel>
    </SettledReports>
  );
}

describe('scrolling to the section in the address', () => {
  const scrolled: string[] = [];
  // jsdom lays nothing out, so it has no scrollIntoView: this one notes which element asked.
  beforeEach(() => {
    scrolled.length = 0;
    window.history.replaceState(null, '', '/usage#second');
    Element.prototype.scrollIntoView = function (this: Element) {
      scrolled.push(this.id);
    };
  });
  afterEach(() => {
    delete (Element.prototype as Partial<Element>).scrollIntoView;
    window.history.replaceState(null, '', '/');
  });

  it('waits until every panel has its first answer, then scrolls once', () => {
    const { rerender } = render(<Page first={loading} second={loading} />);
    rerender(<Page first={loading} second={ready} />);
    expect(scrolled).toEqual([]);
    rerender(<Page first={ready} second={ready} />);
    expect(scrolled).toEqual(['second']);
    // A new period loads again: the admin has the scroll by now.
    rerender(<Page first={loading} second={loading} />);
    rerender(<Page first={ready} second={ready} />);
    expect(scrolled).toEqual(['second']);
  });

  it('scrolls at once when the answers are there from the start', () => {
    render(<Page first={ready} second={ready} />);
    expect(scrolled).toEqual(['second']);
  });
});

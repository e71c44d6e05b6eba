import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import { postAs, startTestCollector, type TestCollector } from '../test-support/server.js';
import type { WritableStore } from '../store/store.js';

const WINDOWS_EDGE =
  'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0';
const IPHONE_SAFARI =
  'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1';
const MAC_FIREFOX = 'Mozilla/5.0 (Macintosh; Intel Mac OS X 10.15; rv:133.0) Gecko/20100101 Firefox/133.0';

/** One visit: page views in order, a second apart, each with the referrer the SDK would send. */
function visit(refUris: string[]) {
  const ctx = browserContext();
  return refUris.map((refUri, i) => {
    const e = browserEnvelope('pageview', ctx) as {
      time: string;
      tags: Record<string, string>;
      data: { baseData: Record<string, unknown> };
    };
    delete e.tags['ai.device.browser'];
    e.time = new Date(Date.now() - (refUris.length - i) * 1000).toISOString();
    e.data.baseData.name = `Page ${i}`;
    e.data.baseData.properties = { refUri };
    return e;
  });
}

let running: TestCollector;
beforeAll(async () => {
  running = await startTestCollector({ retentionDays: 0 });
  const send = async (userAgent: string, envelopes: object[]) =>
    expect(await postAs(running.origin, userAgent, envelopes)).toMatchObject({
      itemsAccepted: envelopes.length,
    });
  // From a search result with a token in its query, then a move within the site.
  await send(
    WINDOWS_EDGE,
    visit(['https://WWW.Search.example:8443/r?q=me&token=secret', 'https://gatehouse.example/']),
  );
  await send(IPHONE_SAFARI, visit(['https://www.search.example/', '']));
  await send(MAC_FIREFOX, visit(['', 'https://news.example/story'])); // Typed in, then came back from news.
  await send(MAC_FIREFOX, visit(['https://gatehouse.example/profile'])); // Within the site: direct.
});
afterAll(() => running.close());

describe('breakdowns', () => {
  it('ranks visitors by referring site, browser, operating system and device class, with shares', async () => {
    const b = await running.collector.analytics.breakdowns({ range: '1h' });
    expect(b.total).toBe(4);
    expect(b.referrers).toEqual([
      { value: 'www.search.example', visitors: 2, share: 0.5 },
      { value: '(direct)', visitors: 1, share: 0.25 },
      { value: 'news.example', visitors: 1, share: 0.25 },
    ]);
    expect(b.browsers).toEqual([
      { value: 'Firefox', visitors: 2, share: 0.5 },
      { value: 'Edge', visitors: 1, share: 0.25 },
      { value: 'Safari', visitors: 1, share: 0.25 },
    ]);
    expect(b.operatingSystems).toEqual([
      { value: 'macOS', visitors: 2, share: 0.5 },
      { value: 'iOS', visitors: 1, share: 0.25 },
      { value: 'Windows', visitors: 1, share: 0.25 },
    ]);
    expect(b.devices).toEqual([
      { value: 'desktop', visitors: 3, share: 0.75 },
      { value: 'mobile', visitors: 1, share: 0.25 },
    ]);
  });

  it('stores only the referrer’s host, lower-cased: never its path, query or port', async () => {
    const rows = await (running.collector.store as WritableStore).read(
      "SELECT DISTINCT referrer FROM items WHERE type = 'pageview' ORDER BY referrer",
    );
    expect(rows.map((r) => r.referrer)).toEqual(['', 'news.example', 'www.search.example']);
  });

  it('applies an entry as a segment: the session’s first referring site, or none', async () => {
    const { usage, analytics } = running.collector;
    const search = { range: '1h', referrer: 'www.search.example' } as const;
    expect((await usage.overview(search)).tiles.users.value).toBe(2);
    expect((await usage.pages(search)).pages.map((p) => p.views)).toEqual([2, 2]);
    const direct = await usage.overview({ range: '1h', referrer: '(direct)' });
    expect(direct.tiles.users.value).toBe(1);
    expect((await usage.overview({ range: '1h', referrer: 'news.example' })).tiles.pageViews.value).toBe(2);
    const ios = await analytics.breakdowns({ range: '1h', os: 'iOS' });
    expect(ios.total).toBe(1);
    expect(ios.browsers).toEqual([{ value: 'Safari', visitors: 1, share: 1 }]);
    expect(ios.referrers).toEqual([{ value: 'www.search.example', visitors: 1, share: 1 }]);
  });
});

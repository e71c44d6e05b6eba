import type { DuckDBValue } from '@duckdb/node-api';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { browserContext, browserEnvelope } from '../test-support/browser-envelopes.js';
import { postAs, startTestCollector, type TestCollector } from '../test-support/server.js';
import type { Segment } from '@gatehouse/api-contract';
import { segmentSql } from './sql.js';
import type { WritableStore } from '../store/store.js';

const FIREFOX_DESKTOP = 'Mozilla/5.0 (X11; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0';
const CHROME_PHONE =
  'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36';
const CHROME_DESKTOP =
  'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';

/** One visitor's items: page views (and an event), as the SDK sends them without a browser tag. */
function visitor(user: { authUserId?: string; roles?: string }, ...pages: string[]) {
  const ctx = browserContext(user.authUserId ? { authUserId: user.authUserId } : {});
  const items = [...pages.map((name) => ['pageview', name] as const), ['event', 'Clicked'] as const];
  return items.map(([kind, name], i) => {
    const e = browserEnvelope(kind, ctx) as {
      time: string;
      tags: Record<string, string>;
      data: { baseData: Record<string, unknown> };
    };
    delete e.tags['ai.device.browser'];
    e.time = new Date(Date.now() - (items.length - i) * 1000).toISOString(); // in order, a second apart
    e.data.baseData.name = name;
    if (user.roles) e.data.baseData.properties = { roles: user.roles };
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
  await send(FIREFOX_DESKTOP, visitor({}, 'Home'));
  await send(CHROME_PHONE, visitor({ authUserId: 'alice', roles: 'member' }, 'Profile'));
  await send(CHROME_DESKTOP, visitor({ authUserId: 'root', roles: 'admin,member' }, 'Usage', 'Profile'));
});
afterAll(() => running.close());

const pageNames = async (segment: object) =>
  (await running.collector.usage.pages({ range: '1h', ...segment })).pages.map((p) => p.name).sort();

describe('segments', () => {
  it('filter by signed-in state, role, browser family and device class, alone and together', async () => {
    expect(await pageNames({})).toEqual(['Home', 'Profile', 'Usage']);
    expect(await pageNames({ auth: 'anonymous' })).toEqual(['Home']);
    expect(await pageNames({ auth: 'signed-in' })).toEqual(['Profile', 'Usage']);
    expect(await pageNames({ role: 'admin' })).toEqual(['Profile', 'Usage']);
    expect(await pageNames({ role: 'member' })).toEqual(['Profile', 'Usage']);
    // A role is matched whole, never as a part of another.
    expect(await pageNames({ role: 'mem' })).toEqual([]);
    expect(await pageNames({ browser: 'Firefox' })).toEqual(['Home']);
    expect(await pageNames({ browser: 'Chrome' })).toEqual(['Profile', 'Usage']);
    expect(await pageNames({ device: 'mobile' })).toEqual(['Profile']);
    expect(await pageNames({ device: 'desktop', auth: 'signed-in' })).toEqual(['Profile', 'Usage']);
    expect(await pageNames({ device: 'desktop', role: 'member', browser: 'Firefox' })).toEqual([]);
  });

  it('apply to the overview, the analytics and the sessions alike', async () => {
    const { usage, analytics } = running.collector;
    const mobile = { range: '1h', device: 'mobile' } as const;
    expect((await usage.overview(mobile)).tiles.users.value).toBe(1);
    expect((await usage.overview({ range: '1h' })).tiles.users.value).toBe(3);
    expect((await usage.sessions(mobile)).sessions).toHaveLength(1);
    expect((await analytics.customEvents({ range: '1h', auth: 'anonymous' })).events).toEqual([
      { name: 'Clicked', count: 1, users: 1, sessions: 1 },
    ]);
    expect((await analytics.retention('day', mobile)).cohorts.at(-1)?.users).toBe(1);
    expect((await analytics.userFlows('Profile', { range: '1h', browser: 'Firefox' })).views).toBe(0);
    expect((await analytics.userFlows('Profile', { range: '1h', role: 'admin' })).previous1).toEqual([
      { pages: ['Usage'], count: 1 },
    ]);
    const funnel = await analytics.funnel(
      [
        { kind: 'page', name: 'Profile' },
        { kind: 'event', name: 'Clicked' },
      ],
      { range: '1h', device: 'desktop' },
    );
    expect(funnel.steps.map((s) => s.users)).toEqual([1, 1]);
  });

  it('binds what it is given as values, never as SQL text, whatever the API let through', async () => {
    const attempt = "x',') OR true OR contains('";
    const values: DuckDBValue[] = ['first'];
    // (Typed as the API's values: an exported function is called with whatever a caller casts.)
    const forged = { role: attempt, browser: "Chrome' OR '1'='1", device: 'mobile' } as unknown as Segment;
    const sql = segmentSql(forged, values, 'i.');
    // Nothing given is in the SQL text; the values follow the query's own, in order.
    for (const given of [attempt, 'Chrome', "'1'='1", 'mobile']) expect(sql).not.toContain(given);
    expect(values).toEqual(['first', `,${attempt},`, "Chrome' OR '1'='1", 'mobile']);
    expect(segmentSql({}, values)).toBe('');
    // The condition as DuckDB runs it over the stored items: the forged segment selects none, and the
    // query's own value keeps its place ($1).
    // (The collector's store is the writable one, whose reads the usage queries use.)
    const store = running.collector.store as WritableStore;
    const count = (condition: string, bound: DuckDBValue[]) =>
      store.read(
        `SELECT count(*)::INTEGER AS n, $1::VARCHAR AS own FROM items i WHERE true${condition}`,
        bound,
      );
    expect(await count(sql, values)).toEqual([{ n: 0, own: 'first' }]);
    const genuine: DuckDBValue[] = ['first'];
    const admin = segmentSql({ role: 'admin', browser: 'Chrome', device: 'desktop' }, genuine, 'i.');
    expect(await count(admin, genuine)).toEqual([{ n: 3, own: 'first' }]);
    // Run by DuckDB through every kind of query: the attempt is a role no one has, so nothing is selected.
    const { usage, analytics } = running.collector;
    expect(await pageNames({ role: attempt })).toEqual([]);
    expect(await pageNames({ browser: "Chrome' OR '1'='1" })).toEqual([]);
    expect((await usage.overview({ range: '1h', role: attempt })).tiles.users.value).toBe(0);
    expect((await analytics.retention('day', { range: '1h', role: attempt })).cohorts.at(-1)?.users).toBe(0);
    expect((await analytics.userFlows('Profile', { range: '1h', role: attempt })).views).toBe(0);
    // And the same query binds a real value as well as it refuses a forged one.
    expect((await usage.overview({ range: '1h', role: 'admin' })).tiles.users.value).toBe(1);
  });

  it('takes only its own retention units, not what every object inherits', async () => {
    for (const unit of ['toString', 'constructor', '__proto__', 'month'])
      await expect(running.collector.analytics.retention(unit as 'day', { range: '1h' })).rejects.toThrow(
        RangeError,
      );
  });
});

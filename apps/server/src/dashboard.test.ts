import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { rangeQuery, type Contract } from '@gatehouse/api-contract';
import {
  createCollector,
  createRemoteQueries,
  createStoreHolderApi,
  runOnLogAnalytics,
  runOnStore,
  type Collector,
  type DashboardQuery,
  type DashboardRunner,
} from '@gatehouse/collector';
import express from 'express';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createApiRouter } from './api-router.js';
import { dashboardHandlers } from './dashboard.js';
import { verifierOfRoleTokens } from './test-support/role-tokens.js';

/**
 * A panel's query added as the README's recipe says ("Add a dashboard panel"), in a test app: its
 * endpoint in a contract, its entry (the store's SQL, the workspace's KQL or why not) in a registry,
 * nothing else. The handlers, the store holder's forwarding and the Log Analytics back-end must follow
 * from the entry without a line of the panel's own.
 */
const countsSchema = z.strictObject({ pageViews: z.number(), dependencies: z.number() });
const fixtureContract = {
  usageCounts: {
    method: 'get',
    path: '/usage/counts',
    summary: 'Page views and calls stored',
    tag: 'usage',
    access: 'admin',
    query: rangeQuery,
    response: countsSchema,
  },
  usageStoreOnly: {
    method: 'get',
    path: '/usage/store-only',
    summary: 'A figure the workspace cannot give',
    tag: 'usage',
    access: 'admin',
    query: rangeQuery,
    response: countsSchema,
  },
} as const satisfies Contract;

const COUNTS_SQL = `SELECT count(*) FILTER (WHERE type = 'pageview')::DOUBLE AS page_views,
  count(*) FILTER (WHERE type = 'dependency')::DOUBLE AS dependencies FROM items`;
const COUNTS_KQL = `union AppPageViews, AppDependencies | summarize page_views = countif(Type == "AppPageViews"), dependencies = countif(Type == "AppDependencies")`;
/** The one shaper of the answer, fed by both back-ends (they name their columns alike). */
const shapeCounts = (row: Record<string, unknown> | undefined) => ({
  pageViews: Number(row?.page_views ?? 0),
  dependencies: Number(row?.dependencies ?? 0),
});

const fixtureQueries = {
  usageCounts: {
    store: async (reader) => shapeCounts((await reader.read(COUNTS_SQL))[0]),
    logAnalytics: async (run) => shapeCounts((await run(COUNTS_KQL, 0, Date.now()))[0]),
  },
  usageStoreOnly: {
    store: async (reader) => shapeCounts((await reader.read(COUNTS_SQL))[0]),
    logAnalytics: { notAvailable: 'Not with Azure Monitor: see the portal.', portalBlade: 'workbooks' },
  },
} satisfies { [N in keyof typeof fixtureContract]: DashboardQuery<N, typeof fixtureContract> };

const IKEY = '8c0c7b2f-4a4e-4c1e-9d7a-0f5b8d6e3a21';
const TOKEN = 'a-collector-token-of-32-characters-or-more';
const verify = verifierOfRoleTokens({ member: ['member'], admin: ['admin'] });

let dir: string;
let collector: Collector;
const servers: Server[] = [];
/** What KQL the workspace stand-in was asked, and the rows it answers (as Log Analytics would). */
const kqlAsked: string[] = [];

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** An app serving the fixture contract, its panels' handlers derived from the registry on `dashboard`. */
function serve(dashboard: DashboardRunner<typeof fixtureQueries> | undefined): Promise<string> {
  const app = express();
  const handlers = dashboardHandlers(fixtureContract, fixtureQueries, dashboard);
  app.use('/api', createApiRouter(fixtureContract, handlers, { verify }));
  return listen(app);
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-dashboard-'));
  collector = await createCollector({
    dataDir: join(dir, 'data'),
    instrumentationKeys: [IKEY],
    allowedOrigins: [],
    retentionDays: 0,
  });
  const base = await listen((req, res) => collector.handle(req, res));
  const envelope = (baseType: string, baseData: Record<string, unknown>) => ({
    time: new Date().toISOString(),
    iKey: IKEY,
    name: 'Microsoft.ApplicationInsights.Item',
    tags: { 'ai.session.id': 's1', 'ai.user.id': 'u1' },
    data: { baseType, baseData: { ver: 2, ...baseData } },
  });
  const sent = await fetch(`${base}/v2/track`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify([
      envelope('PageviewData', { name: 'Home', url: 'https://app.example/' }),
      envelope('PageviewData', { name: 'Profile', url: 'https://app.example/profile' }),
      envelope('RemoteDependencyData', {
        id: '1',
        name: 'GET /api/me',
        duration: '00:00:00.040',
        success: true,
      }),
    ]),
  });
  expect(sent.status).toBe(200);
});
afterAll(async () => {
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
  await collector.close();
  await rm(dir, { recursive: true, force: true });
});

const get = async (base: string, path: string, token = 'admin') => {
  const response = await fetch(`${base}/api${path}`, { headers: { authorization: `Bearer ${token}` } });
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return { status: response.status, body: (json ? await response.json() : {}) as Record<string, unknown> };
};

describe('a dashboard query added by the recipe: one registry entry, served on every back-end', () => {
  it('on the local store: the handler follows from the entry, behind the endpoint’s access and validation', async () => {
    const base = await serve(runOnStore(fixtureQueries, collector.sink.store));
    expect(await get(base, '/usage/counts?range=1h')).toEqual({
      status: 200,
      body: { pageViews: 2, dependencies: 1 },
    });
    expect((await get(base, '/usage/counts', 'member')).status).toBe(403);
    expect((await get(base, '/usage/counts?range=2h')).status).toBe(400);
  });

  it('through the store holder: another replica asks it by the entry’s name and gets the same answer', async () => {
    const holder = createStoreHolderApi({
      token: TOKEN,
      sink: collector.sink,
      queries: collector.sink,
      dashboardQueries: fixtureQueries,
      log: () => undefined,
    });
    const url = await listen((req, res) => holder(req, res));
    const remote = createRemoteQueries<typeof fixtureQueries>({ url, token: TOKEN });
    const base = await serve(remote.dashboard);
    expect(await get(base, '/usage/counts')).toEqual({
      status: 200,
      body: { pageViews: 2, dependencies: 1 },
    });
  });

  it('over Log Analytics: the entry’s KQL, shaped by the same shaper; a 501 with the portal view where it has none', async () => {
    const run = (kql: string) => {
      kqlAsked.push(kql);
      return Promise.resolve([{ page_views: 2, dependencies: 1 }]);
    };
    const base = await serve(
      runOnLogAnalytics(fixtureQueries, run, { resourceId: '/subscriptions/s/components/c' }),
    );
    expect(await get(base, '/usage/counts')).toEqual({
      status: 200,
      body: { pageViews: 2, dependencies: 1 },
    });
    expect(kqlAsked).toEqual([COUNTS_KQL]);
    const refused = await get(base, '/usage/store-only');
    expect(refused.status).toBe(501);
    expect(refused.body).toMatchObject({
      error: 'not_available',
      message: 'Not with Azure Monitor: see the portal.',
    });
    expect(JSON.stringify(refused.body)).toContain('/subscriptions/s/components/c/workbooks');
  });

  it('without a telemetry store, the entry’s endpoint answers like an unknown path', async () => {
    const base = await serve(undefined);
    expect((await get(base, '/usage/counts')).status).toBe(404);
  });
});

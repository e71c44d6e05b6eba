import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import {
  createCollector,
  createLogAnalyticsQueries,
  dashboardQueries,
  runOnLogAnalytics,
  LogAnalyticsError,
  type Collector,
} from '@gatehouse/collector';
import type { Express } from 'express';
import { SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { startLoopbackProvider } from './test-support/loopback-provider.js';
import { TelemetryUserIds } from './telemetry-user-id.js';
import { apiRoutes, asDescribed, asErrorBody } from './test-support/contract.js';

// A provider stand-in on loopback (discovery + JWKS), the app with a real collector in a temp dir.
const AUDIENCE = 'https://gatehouse.test/api';
const IKEY = '8c0c7b2f-4a4e-4c1e-9d7a-0f5b8d6e3a21';
let closeProvider: () => Promise<void>;
let app: Express;
let server: Server;
let issuer: string;
let base: string;
let key: CryptoKey;
let collector: Collector;
let dir: string;

beforeAll(async () => {
  const provider = await startLoopbackProvider();
  ({ issuer, key } = provider);
  closeProvider = provider.close;

  dir = await mkdtemp(join(tmpdir(), 'gatehouse-usage-'));
  await writeFile(
    join(dir, 'index.html'),
    '<html><head><script id="gatehouse-config" type="application/json">{}</script></head></html>',
  );
  collector = await createCollector({
    dataDir: join(dir, 'data'),
    instrumentationKeys: [IKEY],
    allowedOrigins: [],
    retentionDays: 0,
  });
  const config = loadConfig({
    OIDC_AUTHORITY: issuer,
    OIDC_CLIENT_ID: 'gatehouse',
    OIDC_AUDIENCE: AUDIENCE,
    OIDC_ROLES_CLAIM: 'realm_access.roles',
  });
  app = createApp({
    config,
    authority: issuer,
    webRoot: pathToFileURL(`${dir}/`),
    collector,
    usage: collector.usage,
    dashboard: collector.dashboard,
    annotations: collector.annotations,
    telemetryUserIds: new TelemetryUserIds(['a-secret-of-at-least-thirty-two-characters']),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  // Two items of one session, sent as the browser SDK sends them.
  const response = await track([
    envelope(10, 'PageviewData', { name: 'Home', url: 'https://app.example/', duration: '00:00:00.250' }),
    envelope(9, 'RemoteDependencyData', {
      id: '1',
      name: 'GET /api/me',
      duration: '00:00:00.040',
      success: false,
      resultCode: '500',
      target: 'app.example',
    }),
  ]);
  expect(response.status).toBe(200);
});

const sent = Date.now();
function envelope(
  minutesAgo: number,
  baseType: string,
  baseData: Record<string, unknown>,
  tags: Record<string, string> = {
    'ai.session.id': 'sess-1',
    'ai.user.id': 'anon-1',
    'ai.operation.id': 'op-1',
  },
) {
  return {
    time: new Date(sent - minutesAgo * 60_000).toISOString(),
    iKey: IKEY,
    name: 'Microsoft.ApplicationInsights.Item',
    tags,
    data: { baseType, baseData: { ver: 2, ...baseData } },
  };
}

function track(envelopes: unknown[]) {
  return fetch(`${base}/v2/track`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify(envelopes),
  });
}

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await closeProvider();
  await collector.close();
  await rm(dir, { recursive: true, force: true });
});

const token = (roles: string[], claims: Record<string, unknown> = {}) =>
  new SignJWT({ iss: issuer, aud: AUDIENCE, sub: 'someone', realm_access: { roles }, ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);

async function get(path: string, authorization?: string) {
  const response = await fetch(`${base}${path}`, { headers: authorization ? { authorization } : {} });
  return {
    status: response.status,
    cacheControl: response.headers.get('cache-control'),
    body: (await response.json()) as Record<string, unknown>,
  };
}
const asAdmin = async (path: string) => get(path, `Bearer ${await token(['admin'])}`);

const endpoints = [
  '/api/usage/overview',
  '/api/usage/timeseries',
  '/api/usage/pages',
  '/api/usage/exceptions',
  '/api/usage/dependencies',
  '/api/usage/sessions',
  '/api/usage/sessions/sess-1/timeline',
  '/api/usage/experience',
  '/api/usage/events',
  '/api/usage/funnel?step=page:Home&step=page:Profile',
  '/api/usage/retention',
  '/api/usage/flows?page=Home',
  '/api/usage/breakdowns',
];

describe('the usage API', () => {
  it.each(endpoints)(
    '%s: 401 without a token or with a bad one, 403 without the admin role',
    async (path) => {
      expect((await get(path)).status).toBe(401);
      const bad = await get(path, `Bearer ${await token(['admin'], { aud: 'someone-else' })}`);
      expect(bad.status).toBe(401);
      expect(asErrorBody(bad.body).error).toBe('invalid_token');
      const member = await get(path, `Bearer ${await token(['member'])}`);
      expect(member.status).toBe(403);
      expect(asErrorBody(member.body).error).toBe('forbidden');
    },
  );

  it('400 names each bad parameter', async () => {
    const range = await asAdmin('/api/usage/overview?range=2h');
    expect(range.status).toBe(400);
    expect(range.body).toEqual({
      error: 'invalid_request',
      message: 'range must be one of 1h, 24h, 7d, 30d.',
    });
    const both = await asAdmin('/api/usage/sessions?range=1y&limit=0');
    expect(both.status).toBe(400);
    expect(both.body.message).toBe('range must be one of 1h, 24h, 7d, 30d; limit must be at least 1.');
    for (const limit of ['abc', '1.5', '501', '-1']) {
      const r = await asAdmin(`/api/usage/sessions?limit=${limit}`);
      expect(r.status).toBe(400);
      expect(r.body.message).toMatch(/^limit /);
    }
    const repeated = await asAdmin('/api/usage/pages?range=1h&range=24h');
    expect(repeated.body.message).toMatch(/^range /);
    const unknown = await asAdmin('/api/usage/pages?since=2020');
    expect(unknown).toMatchObject({
      status: 400,
      body: { message: 'since is not a parameter of this endpoint.' },
    });
    // A custom period: a time each, both, not beside a range, forwards.
    expect((await asAdmin('/api/usage/pages?from=2020&to=2021')).body.message).toMatch(/^from .*; to /);
    expect((await asAdmin('/api/usage/pages?from=2026-11-01T00:00:00Z')).body.message).toBe(
      'to must be given with from and to both.',
    );
    expect(
      (await asAdmin('/api/usage/pages?range=7d&from=2026-11-01T00:00:00Z&to=2026-11-02T00:00:00Z')).body
        .message,
    ).toBe('range must not be given with from and to.');
    expect(
      (await asAdmin('/api/usage/timeseries?from=2026-11-02T00:00:00Z&to=2026-11-01T00:00:00Z')).body.message,
    ).toBe('to must be after from.');
    const id = await asAdmin(`/api/usage/sessions/${encodeURIComponent("x' OR 1=1")}/timeline`);
    expect(id.status).toBe(400);
    expect(id.body.message).toMatch(/^id must be a session id/);
    expect((await asAdmin(`/api/usage/sessions/${'a'.repeat(129)}/timeline`)).status).toBe(400);
  });

  it('answers admins with JSON, never cached', async () => {
    const overview = await asAdmin('/api/usage/overview?range=1h');
    expect(overview.status).toBe(200);
    expect(overview.cacheControl).toBe('no-store');
    expect(asDescribed('usageOverview', overview.body)).toMatchObject({
      range: '1h',
      tiles: {
        users: { value: 1, previous: 0, change: null },
        sessions: { value: 1, previous: 0, change: null },
        pageViews: { value: 1, previous: 0, change: null },
        failedCalls: { value: 1, previous: 0, change: null },
        exceptions: { value: 0, previous: 0, change: null },
        signedInUsers: { value: 0, previous: 0, change: null },
      },
      // The store takes telemetry: no banner.
      storeFull: null,
    });
    const series = await asAdmin('/api/usage/timeseries');
    expect(asDescribed('usageTimeseries', series.body)).toMatchObject({ range: '24h', bucketMs: 3_600_000 });
    expect(series.body.buckets).toHaveLength(24);
    const pages = await asAdmin('/api/usage/pages?range=24h');
    expect(asDescribed('usagePages', pages.body)).toMatchObject({
      pages: [{ name: 'Home', views: 1, users: 1, avgDurationMs: 250, p95DurationMs: 250 }],
      estimates: [],
    });
    // Seven days are read from the daily sketches (ADR 0074): the answer says which figures are
    // estimates; the 95th percentile is its bin's middle, within 2.5 % of the duration.
    const week = asDescribed('usagePages', (await asAdmin('/api/usage/pages?range=7d')).body);
    expect(week.pages).toMatchObject([{ name: 'Home', views: 1, users: 1, avgDurationMs: 250 }]);
    expect(Math.abs((week.pages[0]?.p95DurationMs ?? 0) - 250)).toBeLessThanOrEqual(250 * 0.025);
    expect(week.estimates.map((e) => [e.field, e.errorOf])).toEqual([
      ['users', 'value'],
      ['p95DurationMs', 'value'],
    ]);
    const exceptions = await asAdmin('/api/usage/exceptions?range=30d');
    expect(asDescribed('usageExceptions', exceptions.body)).toMatchObject({ range: '30d', exceptions: [] });
    const dependencies = await asAdmin('/api/usage/dependencies');
    expect(asDescribed('usageDependencies', dependencies.body).dependencies).toEqual([
      {
        target: 'app.example',
        name: 'GET /api/me',
        count: 1,
        failures: 1,
        failureRate: 1,
        p50DurationMs: 40,
        p95DurationMs: 40,
      },
    ]);
    expect(dependencies.body.estimates).toEqual([]);
    // As the Pages panel, the Calls panel reads seven days from the sketches: the percentiles are estimates.
    const weekCalls = asDescribed(
      'usageDependencies',
      (await asAdmin('/api/usage/dependencies?range=7d')).body,
    );
    expect(weekCalls.dependencies).toMatchObject([{ name: 'GET /api/me', count: 1, failures: 1 }]);
    for (const p of [weekCalls.dependencies[0]?.p50DurationMs, weekCalls.dependencies[0]?.p95DurationMs])
      expect(Math.abs((p ?? 0) - 40)).toBeLessThanOrEqual(40 * 0.025);
    expect(weekCalls.estimates.map((e) => [e.field, e.kind])).toEqual([
      ['p50DurationMs', 'percentile'],
      ['p95DurationMs', 'percentile'],
    ]);
    const sessions = await asAdmin('/api/usage/sessions?limit=10');
    expect(asDescribed('usageSessions', sessions.body).sessions).toMatchObject([
      { sessionId: 'sess-1', user: 'anon-1', authenticated: false, lengthMs: 60_000, pages: 1, errors: 1 },
    ]);
    const timeline = await asAdmin('/api/usage/sessions/sess-1/timeline');
    expect(timeline.cacheControl).toBe('no-store');
    expect(asDescribed('usageSessionTimeline', timeline.body)).toMatchObject({
      sessionId: 'sess-1',
      truncated: false,
    });
    expect(timeline.body.items).toMatchObject([
      { type: 'pageview', name: 'Home', operationId: 'op-1' },
      { type: 'dependency', name: 'GET /api/me', operationId: 'op-1', success: false },
    ]);
    // No web vitals stored: empty figures, every chart bucket listed (the query: analytics-experience.test.ts).
    const experience = await asAdmin('/api/usage/experience?range=7d');
    expect(asDescribed('usageExperience', experience.body)).toMatchObject({
      range: '7d',
      overall: {},
      pages: [],
      bucketMs: 6 * 3_600_000,
    });
    expect(experience.body.trend).toHaveLength(28);
    expect((await asAdmin('/api/usage/experience?range=2d')).status).toBe(400);
    const events = await asAdmin('/api/usage/events?range=1h');
    expect(asDescribed('usageEvents', events.body)).toMatchObject({ range: '1h', events: [], estimates: [] });
    // Over seven days from the daily sketches: the users and sessions are said to be estimates.
    const weekEvents = asDescribed('usageEvents', (await asAdmin('/api/usage/events?range=7d')).body);
    expect(weekEvents.estimates.map((e) => [e.field, e.kind])).toEqual([
      ['users', 'distinct-count'],
      ['sessions', 'distinct-count'],
    ]);
    // The session of beforeAll viewed Home: step 1 reached by its user, step 2 (an event) by nobody.
    const funnel = await asAdmin(
      `/api/usage/funnel?step=page:Home&step=${encodeURIComponent('event:Sent, or not')}`,
    );
    expect(asDescribed('usageFunnel', funnel.body).steps).toEqual([
      { kind: 'page', name: 'Home', users: 1, dropOff: 0, medianMsFromPrevious: null },
      { kind: 'event', name: 'Sent, or not', users: 0, dropOff: 1, medianMsFromPrevious: null },
    ]);
    const oneStep = await asAdmin('/api/usage/funnel?step=page:Home');
    expect(oneStep).toMatchObject({
      status: 400,
      body: { message: 'step must be given at least 2 times.' },
    });
    expect((await asAdmin('/api/usage/funnel?step=Home&step=page:Profile')).body.message).toMatch(/^step\b/);
    // The one user of beforeAll, first seen minutes ago: a cohort of one in that day's row (today's, or
    // yesterday's just after midnight UTC), returning on no later day (the queries:
    // analytics-retention.test.ts, analytics-flows.test.ts).
    const retention = asDescribed('usageRetention', (await asAdmin('/api/usage/retention?range=7d')).body);
    expect(retention.unit).toBe('day');
    const cohorts = retention.cohorts.filter((c) => c.users > 0);
    expect(cohorts).toHaveLength(1);
    expect(cohorts[0]?.users).toBe(1);
    expect(cohorts[0]?.returning.filter((n) => n > 0)).toEqual([]);
    expect(asDescribed('usageRetention', (await asAdmin('/api/usage/retention?unit=week')).body).unit).toBe(
      'week',
    );
    expect(await asAdmin('/api/usage/retention?unit=month')).toMatchObject({
      status: 400,
      body: { error: 'invalid_request' },
    });
    // Segments: every usage endpoint takes them (the queries: analytics-segments.test.ts). The one
    // session of beforeAll was anonymous.
    const anonymous = await asAdmin('/api/usage/pages?auth=anonymous&browser=Chrome&device=desktop&role=x');
    expect(anonymous.status).toBe(200);
    expect(asDescribed('usagePages', (await asAdmin('/api/usage/pages?auth=signed-in')).body).pages).toEqual(
      [],
    );
    expect(
      asDescribed('usagePages', (await asAdmin('/api/usage/pages?auth=anonymous')).body).pages,
    ).toHaveLength(1);
    expect((await asAdmin('/api/usage/funnel?step=page:Home&step=page:Home&device=mobile')).status).toBe(200);
    const signedIn = asDescribed('usageOverview', (await asAdmin('/api/usage/overview?auth=signed-in')).body);
    expect([signedIn.tiles.users.value, signedIn.tiles.verifiedUsers.value]).toEqual([0, 0]);
    const everyone = asDescribed('usageOverview', (await asAdmin('/api/usage/overview?auth=anonymous')).body);
    expect(everyone.tiles.users.value).toBe(1);
    for (const [query, field] of [
      ['auth=maybe', 'auth'],
      ['device=watch', 'device'],
      ['browser=Netscape', 'browser'],
      ["role=a'b", 'role'],
    ] as const) {
      const refused = await asAdmin(`/api/usage/overview?${query}`);
      expect(refused.status, query).toBe(400);
      expect(asErrorBody(refused.body)).toMatchObject({ error: 'invalid_request' });
      expect(refused.body.message, query).toMatch(new RegExp(`^${field}\\b`));
    }
    // Breakdowns (the queries: analytics/breakdowns.test.ts), and their entries as segments.
    const breakdowns = asDescribed('usageBreakdowns', (await asAdmin('/api/usage/breakdowns')).body);
    expect(breakdowns.total).toBe(1);
    expect(breakdowns.browsers.map((b) => b.share)).toEqual(breakdowns.browsers.map(() => 1));
    for (const query of ['referrer=(direct)', 'referrer=www.example.com', 'os=Windows']) {
      expect((await asAdmin(`/api/usage/breakdowns?${query}`)).status, query).toBe(200);
    }
    for (const [query, field] of [
      ['os=BeOS', 'os'],
      ['referrer=https://x.example/path', 'referrer'],
    ] as const) {
      expect((await asAdmin(`/api/usage/overview?${query}`)).body.message, query).toMatch(
        new RegExp(`^${field}\\b`),
      );
    }
    const flows = asDescribed('usageFlows', (await asAdmin('/api/usage/flows?page=Home')).body);
    expect(flows).toMatchObject({ page: 'Home', views: 1, entries: 1, exits: 1, next1: [] });
    expect((await asAdmin('/api/usage/flows')).status).toBe(400);
    expect((await asAdmin(`/api/usage/flows?page=${'x'.repeat(513)}`)).body.message).toMatch(/^page\b/);
    const missing = await asAdmin('/api/usage/sessions/nobody/timeline');
    expect(missing.status).toBe(404);
    expect(asErrorBody(missing.body)).toEqual({
      error: 'not_found',
      message: 'There is no session with this id.',
    });
  });
});

describe("one user's export and erasure", () => {
  it('exports one user as NDJSON and erases them, admins only', async () => {
    const leaver = (n: number) => ({
      time: new Date(Date.now() - n * 1000).toISOString(),
      iKey: IKEY,
      name: 'Microsoft.ApplicationInsights.Event',
      tags: { 'ai.session.id': 'sess-2', 'ai.user.id': 'anon-2', 'ai.user.authUserId': 'leaver-pseudonym' },
      data: { baseType: 'EventData', baseData: { ver: 2, name: `clicked ${n}` } },
    });
    const sent = [leaver(2), leaver(1)];
    const posted = await fetch(`${base}/v2/track`, { method: 'POST', body: JSON.stringify(sent) });
    expect(posted.status).toBe(200);
    const admin = { authorization: `Bearer ${await token(['admin'])}` };
    const member = { authorization: `Bearer ${await token(['member'])}` };

    const path = `${base}/api/usage/users/leaver-pseudonym`;
    for (const [method, url] of [
      ['GET', `${path}/export`],
      ['DELETE', path],
    ] as const) {
      expect((await fetch(url, { method })).status).toBe(401);
      expect((await fetch(url, { method, headers: member })).status).toBe(403);
    }
    const exported = await fetch(`${path}/export`, { headers: admin });
    expect(exported.status).toBe(200);
    expect(exported.headers.get('content-type')).toMatch(/^application\/x-ndjson/);
    expect(exported.headers.get('cache-control')).toBe('no-store');
    const lines = (await exported.text()).trimEnd().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(sent);

    const erased = await fetch(path, { method: 'DELETE', headers: admin });
    expect(erased.status).toBe(200);
    expect(asDescribed('usageUserErase', await erased.json())).toEqual({ erased: 2 });
    expect(await (await fetch(`${path}/export`, { headers: admin })).text()).toBe('');
    // Nobody else's items went.
    expect(await collector.store.count({ user: 'anon-1' })).toBe(2);

    const bad = await fetch(`${base}/api/usage/users/${encodeURIComponent('no spaces')}`, {
      method: 'DELETE',
      headers: admin,
    });
    expect(bad.status).toBe(400);
  });
});

describe('verified signed-in users', () => {
  it('counts and marks only ids this server issued; a forged authUserId is signed in but not verified', async () => {
    const issued = await get('/api/telemetry-user', `Bearer ${await token([])}`);
    expect(issued).toMatchObject({ status: 200, cacheControl: 'no-store' });
    const { id } = asDescribed('telemetryUser', issued.body);
    const me = await get('/api/me', `Bearer ${await token([])}`);
    expect(asDescribed('me', me.body)).toMatchObject({ sub: 'someone', verifiedBy: 'jwt' });
    expect((await get('/api/telemetry-user')).status).toBe(401);

    const view = (session: string, authUserId: string) =>
      envelope(
        5,
        'PageviewData',
        { name: 'Profile', url: 'https://app.example/profile' },
        {
          'ai.session.id': session,
          'ai.user.id': `anon-${session}`,
          'ai.user.authUserId': authUserId,
        },
      );
    // A forger who read an id in the dashboard or guessed one changes a character of the tag.
    const forged = `${id.slice(0, 23)}${id.endsWith('A') ? 'B' : 'A'}`;
    const response = await track([view('sess-v', id), view('sess-f', forged), view('sess-g', 'admin')]);
    expect(response.status).toBe(200);

    const overview = await asAdmin('/api/usage/overview?range=1h');
    expect(overview.body.tiles).toMatchObject({
      signedInUsers: { value: 3 },
      verifiedUsers: { value: 1, previous: 0, change: null },
    });
    // A custom period counts them over its own bounds, and its previous period over the same length before.
    const from = new Date(Date.now() - 2 * 3_600_000).toISOString();
    const to = new Date(Date.now() + 60_000).toISOString();
    const custom = await asAdmin(`/api/usage/overview?from=${from}&to=${to}`);
    expect(custom.body).toMatchObject({ range: 'custom', from, to });
    expect(custom.body.tiles).toMatchObject({ verifiedUsers: { value: 1, previous: 0, change: null } });
    const before = await asAdmin(
      `/api/usage/overview?from=${to}&to=${new Date(Date.now() + 3_600_000).toISOString()}`,
    );
    expect(before.body.tiles).toMatchObject({ verifiedUsers: { value: 0, previous: 1 } });
    const sessions = (await asAdmin('/api/usage/sessions?range=1h')).body.sessions as Array<{
      sessionId: string;
      verified: boolean;
    }>;
    const verified = Object.fromEntries(sessions.map((s) => [s.sessionId, s.verified]));
    expect(verified).toEqual({ 'sess-1': false, 'sess-v': true, 'sess-f': false, 'sess-g': false });
    expect((await asAdmin('/api/usage/sessions/sess-v/timeline')).body.verified).toBe(true);
    expect((await asAdmin('/api/usage/sessions/sess-f/timeline')).body.verified).toBe(false);
  });
});

describe('the OpenAPI description', () => {
  it('is served publicly, and names every route of the /api router, and only those', async () => {
    const served = await get('/api/openapi.json');
    expect(served).toMatchObject({ status: 200, body: { openapi: '3.1.0' } });
    const documented = Object.entries(served.body.paths as Record<string, object>).flatMap(
      ([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`),
    );
    const routes = apiRoutes(app);
    expect(routes).toContain('delete /usage/users/{id}');
    expect(documented.sort()).toEqual(routes.sort());
  });
});

describe('the usage API over Log Analytics', () => {
  // The workspace stands in as a query runner answering in the API's rows (the HTTP client itself is
  // tested against a loopback server in the collector); here: what the API makes of the answers.
  let workspaceServer: Server;
  let workspaceBase: string;
  let fail: Error | undefined;
  beforeAll(async () => {
    const run = (query: string) => {
      if (fail) return Promise.reject(fail);
      if (query.includes('ingestion_time()')) {
        return Promise.resolve([{ latest: new Date('2026-11-25T11:59:00Z'), delayMs: 95_000 }]);
      }
      return Promise.resolve([{ current: true, users: 3, page_views: 40 }]);
    };
    const workspace = createLogAnalyticsQueries(run);
    const links = {
      resourceId: '/subscriptions/s/resourceGroups/g/providers/microsoft.insights/components/c',
    };
    const config = loadConfig({
      OIDC_AUTHORITY: issuer,
      OIDC_CLIENT_ID: 'gatehouse',
      OIDC_AUDIENCE: AUDIENCE,
    });
    const laApp = createApp({
      config: { ...config, oidc: { ...config.oidc, rolesClaim: 'realm_access.roles' } },
      authority: issuer,
      webRoot: pathToFileURL(`${dir}/`),
      usage: workspace.usage,
      dashboard: runOnLogAnalytics(dashboardQueries, run, links),
      usageSource: { kind: 'log-analytics', freshness: () => workspace.freshness() },
    });
    workspaceServer = laApp.listen(0, '127.0.0.1');
    await new Promise((resolve) => workspaceServer.once('listening', resolve));
    workspaceBase = `http://127.0.0.1:${(workspaceServer.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise((resolve) => workspaceServer.close(resolve)));

  const asAdminThere = async (path: string) => {
    const response = await fetch(`${workspaceBase}${path}`, {
      headers: { authorization: `Bearer ${await token(['admin'])}` },
    });
    return {
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
      body: (await response.json()) as Record<string, unknown>,
    };
  };

  it('answers the same contract, and says which source it shows and how fresh it is', async () => {
    fail = undefined;
    const overview = await asAdminThere('/api/usage/overview?range=1h');
    expect(overview.status).toBe(200);
    expect(asDescribed('usageOverview', overview.body)).toMatchObject({
      source: { kind: 'log-analytics', latestItem: '2026-11-25T11:59:00.000Z', ingestionDelayMs: 95_000 },
      tiles: { users: { value: 3 }, pageViews: { value: 40 } },
    });
  });

  it.each([
    ['/api/usage/funnel?step=page:Home&step=page:Profile', /Funnels/, /\/funnels$/],
    ['/api/usage/retention', /Retention/, /\/retention$/],
    ['/api/usage/flows?page=Home', /User flows/, /\/userFlows$/],
    ['/api/usage/overview?device=mobile', /device segment/, undefined],
  ])('%s: 501 not_available, with the portal view when there is one', async (path, message, link) => {
    fail = undefined;
    const answer = await asAdminThere(path);
    expect(answer.status).toBe(501);
    const body = asErrorBody(answer.body);
    expect(body.error).toBe('not_available');
    expect(body.message).toMatch(message);
    if (link) expect(body.link).toMatch(link);
  });

  it('503 source_unavailable with Retry-After when the workspace does not answer', async () => {
    fail = new LogAnalyticsError('throttled', "Log Analytics is throttling this workspace's queries");
    const answer = await asAdminThere('/api/usage/pages');
    expect(answer).toMatchObject({ status: 503, retryAfter: '30', body: { error: 'source_unavailable' } });
  });
});

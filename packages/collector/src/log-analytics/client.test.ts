import type { ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { selfSignedCertificate, type TestCertificate } from '../test-support/tls.js';
import { LogAnalyticsError, logAnalyticsRunner } from './client.js';
import { createLogAnalyticsQueries } from './log-analytics-queries.js';

/*
 * Microsoft's client against a loopback server that answers as the Log Analytics query API documents
 * (https://learn.microsoft.com/azure/azure-monitor/logs/api/response-format): tables of columns and
 * rows, an `error` beside them for a partial result, 429 with Retry-After, and a server that never answers.
 */
type Handler = (body: { query: string; timespan: string }, res: ServerResponse) => void;

let certificate: TestCertificate;
let server: https.Server;
let origin: string;
let handler: Handler;
const seen: { path: string; authorization: string | undefined; body: { query: string; timespan: string } }[] =
  [];

beforeAll(async () => {
  certificate = selfSignedCertificate();
  server = https.createServer({ cert: certificate.cert, key: certificate.key }, (req, res) => {
    let text = '';
    req.on('data', (c: Buffer) => (text += String(c)));
    req.on('end', () => {
      const body = JSON.parse(text) as { query: string; timespan: string };
      seen.push({ path: req.url ?? '', authorization: req.headers.authorization, body });
      handler(body, res);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  certificate.remove();
});

const credential = {
  getToken: () => Promise.resolve({ token: 'test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

const runner = (timeoutMs = 5_000) =>
  logAnalyticsRunner({
    workspaceId: 'ws-1',
    credential,
    endpoint: `${origin}/v1`,
    ca: certificate.cert,
    timeoutMs,
    maxRetries: 1,
  });

const json =
  (status: number, body: unknown, headers: Record<string, string> = {}): Handler =>
  (_b, res) => {
    res.writeHead(status, { 'Content-Type': 'application/json', ...headers });
    res.end(JSON.stringify(body));
  };

const overviewTable = {
  name: 'PrimaryResult',
  columns: [
    { name: 'current', type: 'bool' },
    { name: 'users', type: 'long' },
    { name: 'signed_in', type: 'long' },
    { name: 'sessions', type: 'long' },
    { name: 'page_views', type: 'long' },
    { name: 'exceptions', type: 'long' },
    { name: 'failed_calls', type: 'long' },
  ],
  rows: [
    [true, 12, 3, 20, 150, 4, 2],
    [false, 10, 3, 18, 100, 0, 1],
  ],
};

describe('the Log Analytics client', () => {
  it('posts the query with the token and time span, and answers the overview from the tables', async () => {
    handler = json(200, { tables: [overviewTable] });
    const queries = createLogAnalyticsQueries(await runner());
    const now = Date.parse('2026-11-25T12:00:00Z');
    const overview = await queries.usage.overview({ range: '1h', now });
    expect(overview.tiles.pageViews).toEqual({ value: 150, previous: 100, change: 0.5 });
    expect(overview.tiles.exceptions).toEqual({ value: 4, previous: 0, change: null });
    const request = seen.at(-1);
    expect(request?.path).toBe('/v1/workspaces/ws-1/query');
    expect(request?.authorization).toBe('Bearer test-token');
    expect(request?.body.query).toMatch(/^union AppPageViews/);
    expect(request?.body.timespan).toBe('2026-11-25T10:00:00.000Z/2026-11-25T12:00:00.000Z');
  });

  it('refuses a partial result rather than showing it as whole', async () => {
    handler = json(200, {
      tables: [overviewTable],
      error: { code: 'PartialError', message: 'There were some errors when processing your query.' },
    });
    const run = await runner();
    await expect(run('AppEvents', 0, 1)).rejects.toMatchObject({ code: 'partial', message: /PartialError/ });
  });

  it('waits out a 429 (Retry-After) once, then answers; a throttling that goes on is said so', async () => {
    let calls = 0;
    handler = (body, res) => {
      calls++;
      if (calls === 1)
        return json(
          429,
          { error: { code: 'TooManyRequests', message: 'slow down' } },
          { 'Retry-After': '1' },
        )(body, res);
      json(200, { tables: [{ name: 'PrimaryResult', columns: [{ name: 'n', type: 'long' }], rows: [[7]] }] })(
        body,
        res,
      );
    };
    const run = await runner();
    const started = Date.now();
    expect(await run('AppEvents | count', 0, 1)).toEqual([{ n: 7 }]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    handler = json(429, { error: { code: 'TooManyRequests', message: 'slow down' } }, { 'Retry-After': '1' });
    const error = await run('AppEvents | count', 0, 1).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LogAnalyticsError);
    expect(error).toMatchObject({ code: 'throttled' });
  });

  it('gives up on a query that does not answer within the time-out', async () => {
    handler = () => undefined; // never answers
    const run = await runner(300);
    const error = await run('AppEvents | count', 0, 1).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'timeout' });
  });

  it('names the service refusing a query (400) and what it said', async () => {
    handler = json(400, {
      error: { code: 'BadArgumentError', message: 'The request had some invalid properties' },
    });
    const error = await (await runner())('AppEvents | bad', 0, 1).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'refused', message: /400/ });
  });
});

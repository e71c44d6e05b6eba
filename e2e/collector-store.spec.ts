import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import {
  ACCOUNTS,
  apiFromPage,
  logInAtProvider,
  sessionTokens,
  startServer,
  type StartedServer,
} from './support';
import { waitForFetchTracking, type Envelope } from './telemetry-support';

/**
 * The browser SDK, from Gatehouse itself, delivering every kind of item through real page
 * navigations (page-hide beacons included) into the collector's store, read back with
 * `npm run telemetry:export` once the server has stopped. A server of its own, so it can be stopped.
 */
const run = promisify(execFile);

let server: StartedServer;

test.beforeAll(async () => {
  server = await startServer(20, { TELEMETRY_CONSENT: 'implied' });
});

test.afterAll(async () => {
  await server.stop();
});

const KINDS = [
  'PageviewData',
  'PageviewPerformanceData',
  'ExceptionData',
  'RemoteDependencyData',
  'EventData',
  'MetricData',
  'MessageData',
];

/** The collector's names for those kinds (its `type` column). */
const STORED_TYPES = [
  'pageview',
  'pageviewperformance',
  'exception',
  'dependency',
  'event',
  'metric',
  'trace',
];

async function exportItems(...args: string[]): Promise<Envelope[]> {
  const { stdout } = await run(process.execPath, ['packages/collector/dist/cli/export.js', ...args], {
    env: { ...process.env, GATEHOUSE_DATA_DIR: server.dataDir },
    maxBuffer: 64 * 1024 * 1024,
  });
  return stdout
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as Envelope);
}

test('every kind of browser telemetry reaches the store and the export, through real navigations', async ({
  page,
}) => {
  // A sign-in, five diagnostics, navigations and an export by a child process: 22 s alone on a busy
  // machine, more than 60 s beside the Firefox journey.
  test.setTimeout(120_000);
  await page.goto(server.origin);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await logInAtProvider(page, ACCOUNTS.admin, server.provider);
  await expect(page.getByTestId('display-name')).toHaveText('Ada Admin');
  await page.goto(`${server.origin}/diagnostics`);
  await expect(page.getByRole('heading', { name: 'Diagnostics' })).toBeVisible();
  // The API call is reported only once this document's SDK tracks fetch (it loads after the first paint).
  await waitForFetchTracking(page);
  for (const action of [
    'Send an event',
    'Send a metric',
    'Send a trace',
    'Call the API',
    'Throw an uncaught error',
  ]) {
    await page.getByRole('button', { name: action }).click();
  }
  await expect(page.getByRole('status')).toHaveText('The API answered for admin.');
  // A real navigation away: whatever is pending leaves with the page-hide beacon. The server is stopped
  // once its own usage API shows every kind of item in this browser session (the beacon's included).
  const { access_token } = await sessionTokens(page);
  const sessionId = (await page.context().cookies())
    .find((c) => c.name === 'ai_session')
    ?.value.split('|')[0];
  expect(sessionId).toBeTruthy();
  // A page of the same origin without the app: the app's page-hide beacon leaves, and the browser's DPoP
  // key stays at hand for the API calls below.
  await page.goto(`${server.origin}/api/openapi.json`);
  await expect
    .poll(async () => {
      const answer = await apiFromPage(
        page,
        `/api/usage/sessions/${encodeURIComponent(sessionId ?? '')}/timeline`,
        access_token,
      );
      const { items } = answer.body as { items: Array<{ type: string }> };
      return [...new Set(items.map((item) => item.type))].sort();
    })
    .toEqual([...STORED_TYPES].sort());
  await server.stop();

  const items = await exportItems();
  const kinds = new Set(items.map((item) => item.data.baseType));
  for (const kind of KINDS) {
    expect(kinds, `no ${kind} in the export`).toContain(kind);
  }
  const text = JSON.stringify(items);
  for (const expected of [
    'Diagnostics event',
    'Diagnostics metric',
    'Diagnostics trace',
    'Diagnostics: an uncaught error',
  ]) {
    expect(text).toContain(expected);
  }
  expect(items.some((item) => String(item.data.baseData.data).endsWith('/api/me'))).toBe(true);

  const exceptions = await exportItems('--type', 'exception');
  expect(exceptions.length).toBeGreaterThan(0);
  expect(exceptions.every((item) => item.data.baseType === 'ExceptionData')).toBe(true);
  const future = await exportItems('--since', new Date(Date.now() + 60_000).toISOString());
  expect(future).toEqual([]);
});

import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { expect, type Page } from '@playwright/test';
/** The built-in collector's instrumentation key (apps/server/src/config.ts): not a secret. */
import {
  ACCOUNTS,
  apiFromPage,
  expectRefusedOnceExpired,
  logInAtProvider,
  misbehave,
  sessionTokens,
  signIn,
  startServer,
  test,
  type StartedServer,
} from './support';

/** A Gatehouse of its own with an empty store, so the dashboard's counts are exactly this test's. */
let fresh: StartedServer;

test.beforeAll(async () => {
  fresh = await startServer(30, { TELEMETRY_CONSENT: 'implied' });
});

test.afterAll(async () => {
  await fresh.stop();
});

async function signInAt(page: Page, server: StartedServer, account = ACCOUNTS.admin) {
  await page.goto(server.origin);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await logInAtProvider(page, account, server.provider);
  await expect(page.getByTestId('display-name')).toHaveText(account.name);
}

test('an admin sees exactly the activity that happened, on every panel', async ({ page }) => {
  const scripts: string[] = [];
  page.on('request', (request) => {
    if (request.resourceType() === 'script') scripts.push(new URL(request.url()).pathname);
  });
  await signInAt(page, fresh);
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('api-me')).toContainText('"sub": "admin"');
  await page.getByRole('navigation').getByRole('link', { name: 'Diagnostics' }).click();
  await page.getByRole('button', { name: 'Throw an uncaught error' }).click();
  await page.getByRole('button', { name: 'Call the API' }).click();
  await expect(page.getByRole('status')).toHaveText('The API answered for admin.');
  // The dashboard is a chunk of its own: nothing of it loaded for the other pages.
  expect(scripts.filter((path) => /usage-page|session-page/.test(path))).toEqual([]);
  // Leaving the page hands its telemetry over; the dashboard then reads the store.
  await page.goto(`${fresh.origin}/usage`);
  await expect(page.getByRole('heading', { name: 'Usage', level: 1 })).toBeVisible();
  expect(scripts.some((path) => path.includes('usage-page'))).toBe(true);

  await expect
    .poll(
      async () => {
        await page.reload();
        return page.getByTestId('tile-exceptions').locator('.tile-value').textContent({ timeout: 10_000 });
      },
      { timeout: 30_000 },
    )
    .toBe('1');
  await expect(page.getByTestId('tile-users').locator('.tile-value')).toHaveText('1');
  await expect(page.getByTestId('tile-signedInUsers').locator('.tile-value')).toHaveText('1');
  // The admin's id was issued by this server: a verified user, and marked so in the sessions.
  await expect(page.getByTestId('tile-verifiedUsers').locator('.tile-value')).toHaveText('1');
  await expect(page.getByTestId('sessions-table')).toContainText('verified');
  await expect(page.getByTestId('tile-sessions').locator('.tile-value')).toHaveText('1');
  const pages = page.getByTestId('pages-table');
  await expect(pages.getByRole('row', { name: /^Profile 1 1/ })).toBeVisible();
  await expect(pages.getByRole('row', { name: /^Diagnostics 1 1/ })).toBeVisible();
  await expect(page.getByTestId('exceptions-list')).toContainText('Diagnostics: an uncaught error');
  await expect(page.getByTestId('calls-table')).toContainText('/api/me');
  // Each chart has its table.
  await expect(page.getByText('Users over time: as a table')).toBeVisible();

  // One session, and its timeline in order.
  await page.getByTestId('sessions-table').getByRole('link').first().click();
  const timeline = page.getByTestId('timeline');
  await expect(timeline).toContainText('Page view');
  await expect(timeline).toContainText('Exception');
  const text = (await timeline.textContent()) ?? '';
  expect(text.indexOf('Profile')).toBeLessThan(text.indexOf('Diagnostics'));
});

test('values of any length keep the dashboard within the screen, in full one click away; forgeries are marked', async ({
  page,
}) => {
  const long = (char: string, length: number) => `${char.repeat(length - 3)}END`;
  const session = 'layout-session';
  const tags = {
    'ai.session.id': session,
    'ai.user.id': 'layout-user',
    // Shaped like an issued id, but not issued by this server.
    'ai.user.authUserId': 'ForgedForgedForgedForged',
  };
  const item = (baseType: string, baseData: Record<string, unknown>) => ({
    time: new Date().toISOString(),
    iKey: LOCAL_INSTRUMENTATION_KEY,
    name: 'Microsoft.ApplicationInsights.Item',
    tags,
    data: { baseType, baseData: { ver: 2, ...baseData } },
  });
  const sent = await fetch(`${fresh.origin}/v2/track`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify([
      item('PageviewData', { name: long('p', 1024), url: `${fresh.origin}/x` }),
      item('ExceptionData', {
        exceptions: [
          { typeName: 'Error', message: long('m', 20_000), hasFullStack: true, stack: long('s', 20_000) },
        ],
      }),
      item('RemoteDependencyData', {
        id: 'd1',
        name: long('n', 1024),
        target: long('t', 1024),
        duration: '00:00:00.010',
        success: true,
        resultCode: '200',
      }),
      item('MessageData', { message: long('q', 20_000) }),
    ]),
  });
  expect(sent.status).toBe(200);

  await page.setViewportSize({ width: 1024, height: 768 });
  await signInAt(page, fresh);
  await page.goto(`${fresh.origin}/usage`);
  await expect(page.getByTestId('pages-table')).toContainText('pppp');
  await expect(page.getByTestId('exceptions-list')).toContainText('mmmm');
  await expect(page.getByTestId('calls-table')).toContainText('tttt');
  const width = () => page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  expect(await width()).toBeLessThanOrEqual(0);
  // The full text is there: open a cut value and read its end.
  const pageName = page.getByTestId('pages-table').locator('details').first();
  await pageName.locator('summary').click();
  await expect(pageName).toContainText('pEND');
  await page
    .getByTestId('exceptions-list')
    .locator('li', { hasText: 'mmmm' })
    .getByText('Sample stack')
    .click();
  await expect(page.getByTestId('exceptions-list')).toContainText('sEND');
  expect(await width()).toBeLessThanOrEqual(0);

  // The forged authUserId: signed in, but not verified.
  const row = page.getByTestId('sessions-table').getByRole('row', { name: /ForgedForged/ });
  await expect(row).toContainText('unverified');

  await row.getByRole('link').click();
  const timeline = page.getByTestId('timeline');
  await expect(timeline).toContainText('qqqq');
  await expect(page.getByText('unverified')).toBeVisible();
  expect(await width()).toBeLessThanOrEqual(0);
  for (const details of await timeline.locator('details').all()) await details.locator('summary').click();
  await expect(timeline).toContainText('qEND');
  expect(await width()).toBeLessThanOrEqual(0);
});

test('a member is refused by the page and by the API; bad tokens get 401', async ({ page, request }) => {
  // Short-lived tokens, to see one refused once expired; long enough for the checks before it on a
  // loaded machine (2 s was not), and put back whatever happens so the next test is not affected.
  const TTL_SECONDS = 8;
  await misbehave(request, null, { accessTokenTtlSeconds: TTL_SECONDS });
  try {
    await page.goto('/');
    await signIn(page, ACCOUNTS.alice);
    await page.goto('/usage');
    await expect(page.getByRole('heading', { name: 'No access' })).toBeVisible();
    await expect(page.getByRole('navigation').getByRole('link', { name: 'Usage' })).toHaveCount(0);
    const tokens = await sessionTokens(page);
    // A page of the same origin without the app: nothing renews meanwhile, and the browser's key stays at hand.
    await page.goto('/api/openapi.json');

    expect((await apiFromPage(page, '/api/usage/overview')).status).toBe(403);
    expect((await request.get('/api/usage/overview')).status()).toBe(401);
    const wrongAudience = await request.get('/api/usage/overview', {
      headers: { Authorization: `Bearer ${tokens.id_token}` },
    });
    expect(wrongAudience.status()).toBe(401);
    await expectRefusedOnceExpired(
      page,
      '/api/usage/overview',
      tokens.access_token ?? '',
      (TTL_SECONDS + 15) * 1000,
    );
  } finally {
    await misbehave(request, null, { accessTokenTtlSeconds: 300 });
  }
});

test('an admin gets clear 400s for bad input, and the API is described', async ({ page, request }) => {
  await page.goto('/');
  await signIn(page, ACCOUNTS.admin);
  const bad = await apiFromPage(page, '/api/usage/overview?range=2y');
  expect(bad.status).toBe(400);
  expect(JSON.stringify(bad.body)).toContain('range');
  const spec = (await (await request.get('/api/openapi.json')).json()) as { openapi: string; paths: object };
  expect(spec.openapi).toMatch(/^3\./);
  // Paths are relative to the document's server, `/api`.
  expect(Object.keys(spec.paths)).toEqual(expect.arrayContaining(['/usage/overview', '/me']));
});

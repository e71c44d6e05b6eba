import { expect, test, type Browser, type BrowserContext, type Page, type Request } from '@playwright/test';
import { APP, APP_WITHOUT_PROVIDER, IDP } from '../playwright.config';
import {
  ACCOUNTS,
  apiFromPage,
  logInAtProvider,
  sessionTokens,
  startServer,
  signIn,
  signOutThroughProvider,
} from './support';
import {
  acceptUsageData,
  expectNoSecretsPosted,
  hidePage,
  recordTelemetry,
  unsaltedId,
  waitForFetchTracking,
  waitForSdk,
} from './telemetry-support';
import { recordingProxy } from './recording-proxy';

// Telemetry posts can still be on their way when a test ends: let them go.
test.afterEach(async ({ page }) => {
  await page.unrouteAll({ behavior: 'ignoreErrors' });
});

async function telemetryState(page: Page, context: BrowserContext) {
  const cookies = (await context.cookies()).map((cookie) => cookie.name).filter((name) => /^ai_/i.test(name));
  const storage = await page.evaluate(() =>
    [...Object.keys(localStorage), ...Object.keys(sessionStorage)].filter((key) => /^ai_/i.test(key)),
  );
  return [...cookies, ...storage];
}

/** Requests for the Application Insights SDK's chunk (it is loaded only with consent). */
function sdkChunkRequests(telemetry: { requests: Request[] }): string[] {
  return telemetry.requests
    .map((request) => request.url())
    .filter((url) => /\/assets\/sdk-[^/]*\.js$/.test(url));
}

/**
 * The store as an admin reads it through the usage API, signed in once in a browser context of its own:
 * `pageViews` counts the page views named `name`, dated before `before`, that one session holds.
 */
async function storeReader(browser: Browser) {
  const context = await browser.newContext();
  const admin = await context.newPage();
  await admin.goto(APP);
  await signIn(admin, ACCOUNTS.admin);
  return {
    async pageViews(sessionId: string, name: string, before: number): Promise<number> {
      const answer = await apiFromPage(
        admin,
        `/api/usage/sessions/${encodeURIComponent(sessionId)}/timeline`,
      );
      expect(answer.status).toBe(200);
      const timeline = answer.body as {
        items: { type: string; name: string | null; time: string }[];
      };
      return timeline.items.filter(
        (item) => item.type === 'pageview' && item.name === name && Date.parse(item.time) < before,
      ).length;
    },
    close: () => context.close(),
  };
}

/** The consent banner's Accept (telemetry-support.ts). */
const accept = acceptUsageData;

test('nothing is stored or sent before consent; the choice is remembered and can be changed', async ({
  page,
  context,
}) => {
  const telemetry = await recordTelemetry(page);
  await page.goto('/');
  const banner = page.getByRole('dialog', { name: 'Usage data' });
  await expect(banner).toBeVisible();
  await expect(banner.getByRole('button', { name: 'Accept' })).toBeVisible();
  // The banner shows once the app has decided about the SDK, and loading it would have started in that
  // same step: so no request for its chunk by now means none will come from this decision.
  expect(sdkChunkRequests(telemetry)).toEqual([]);
  expect(await telemetryState(page, context)).toEqual([]);
  expect(telemetry.posts).toHaveLength(0);

  await banner.getByRole('button', { name: 'Decline' }).click();
  await page.reload();
  await expect(page.getByText('Usage data: declined.')).toBeVisible();
  await expect(banner).toBeHidden();
  expect(sdkChunkRequests(telemetry)).toEqual([]);
  expect(await telemetryState(page, context)).toEqual([]);
  await page.reload(); // leaving the page would hand pending telemetry over, if there were any
  await expect(page.getByText('Usage data: declined.')).toBeVisible();
  expect(telemetry.posts).toHaveLength(0);

  await page.getByRole('button', { name: 'Change' }).click();
  await accept(page);
  await expect(page.getByText('Usage data: accepted.')).toBeVisible();
  await page.goto('/nowhere'); // a page viewed after accepting
  await waitForSdk(page);
  expect(sdkChunkRequests(telemetry)).not.toEqual([]); // the checks above look for the right chunk
  expect((await telemetryState(page, context)).length).toBeGreaterThan(0);
  await hidePage(page);
  await expect.poll(() => telemetry.ofType('PageviewData').length).toBeGreaterThan(0);
});

test('a session is reported: page views, exceptions, calls, users, and never a secret', async ({ page }) => {
  const telemetry = await recordTelemetry(page);
  let callbackUrl = '';
  page.on('request', (request) => {
    if (request.url().startsWith(`${APP}/callback?`)) callbackUrl = request.url();
  });

  // Signed out: the home page.
  await page.goto('/');
  await accept(page);
  // Its view is posted before the sign-in navigates away (CI's run of 7e5e5b0 signed in before the lazily
  // loaded SDK had sent it, and found only the signed-in Home view).
  await expect
    .poll(() => telemetry.ofType('PageviewData').filter((e) => e.data.baseData.name === 'Home').length)
    .toBe(1);

  // Signed in as admin, browsing by the menu and the diagnostics page.
  await signIn(page, ACCOUNTS.admin);
  const tokens = await sessionTokens(page);
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('api-me')).toContainText('"sub": "admin"');
  await page.goto('/diagnostics');
  await expect(page.getByRole('heading', { name: 'Diagnostics' })).toBeVisible();
  // A fresh document: its SDK loads after the first paint (CI's run of c9e2418 clicked before it had).
  await waitForFetchTracking(page);
  await page.getByRole('button', { name: 'Call the API' }).click();
  await expect(page.getByRole('status')).toHaveText('The API answered for admin.');
  await page.getByRole('button', { name: 'Throw an uncaught error' }).click();
  await page.getByRole('button', { name: 'Reject a promise' }).click();
  await page.getByRole('button', { name: 'Break this page' }).click();
  await expect(page.getByRole('heading', { name: 'Something went wrong' })).toBeVisible();
  await expect(page.getByRole('banner')).toBeVisible(); // the route failed, not the app
  await hidePage(page);

  // Page views: each page once, named after its route; never the callback.
  await expect
    .poll(() => telemetry.ofType('PageviewData').map((e) => e.data.baseData.name))
    .toEqual(expect.arrayContaining(['Home', 'Profile', 'Diagnostics']));
  const pageViews = telemetry.ofType('PageviewData');
  const names = pageViews.map((e) => e.data.baseData.name as string);
  expect(names.filter((name) => name === 'Profile')).toHaveLength(1);
  expect(names.filter((name) => name === 'Diagnostics')).toHaveLength(1);
  for (const view of pageViews) {
    expect(String(view.data.baseData.url)).not.toContain('/callback');
    expect(view.data.baseData.duration).toMatch(
      /^\d+\.?\d*:?\d{2}:\d{2}:\d{2}\.\d{3}$|^\d{2}:\d{2}:\d{2}\.\d{3}$/,
    );
  }
  const profileView = pageViews.find((e) => e.data.baseData.name === 'Profile');
  expect(profileView?.data.baseData.duration).not.toBe('00:00:00.000');
  // A page after the load's first is an operation of its own, as with the SDK's own route tracking: the
  // Profile page's view and its API call share one, apart from the signed-in Home page's (the load's).
  const signedInHome = pageViews.findLast((e) => e.data.baseData.name === 'Home');
  const profileOperation = profileView?.tags['ai.operation.id'];
  expect(profileOperation).toMatch(/^[0-9a-f]{32}$/);
  expect(profileOperation).not.toBe(signedInHome?.tags['ai.operation.id']);
  expect(profileView?.tags['ai.operation.name']).toBe('Profile');
  expect(
    telemetry
      .ofType('RemoteDependencyData')
      .filter((e) => e.tags['ai.operation.id'] === profileOperation)
      .map((e) => e.data.baseData.name),
  ).toEqual(['GET /api/me']);

  // Exceptions: uncaught, unhandled rejection, and the route boundary's render error with its component stack.
  await expect.poll(() => telemetry.ofType('ExceptionData').length).toBeGreaterThanOrEqual(3);
  const exceptions = telemetry.ofType('ExceptionData').map((e) => JSON.stringify(e.data.baseData));
  expect(exceptions.some((text) => text.includes('Diagnostics: an uncaught error'))).toBe(true);
  expect(exceptions.some((text) => text.includes('Diagnostics: an unhandled rejection'))).toBe(true);
  const renderError = telemetry
    .ofType('ExceptionData')
    .find((e) => JSON.stringify(e.data.baseData).includes('Diagnostics: a render error'));
  expect(renderError?.data.baseData.properties).toMatchObject({
    boundary: 'route',
    componentStack: expect.stringContaining('diagnostics-page') as unknown as string,
  });

  // Calls: the API call, with its trace (that the server receives it is the next test's).
  const apiDependency = telemetry
    .ofType('RemoteDependencyData')
    .find((e) => String(e.data.baseData.data).endsWith('/api/me'));
  expect(apiDependency?.tags['ai.operation.id']).toMatch(/^[0-9a-f]{32}$/);
  expect(apiDependency?.data.baseData.resultCode).toBe('200');
  // No correlation header ever goes to the identity provider.
  for (const request of telemetry.requests.filter((r) => r.url().startsWith(IDP))) {
    expect(request.headers().traceparent).toBeUndefined();
  }

  // Sessions and users: the SDK's ids on everything; after sign-in the pseudonymous user, never a name.
  const all = telemetry.envelopes();
  const sessionIds = new Set(all.map((e) => e.tags['ai.session.id']));
  expect(sessionIds.size).toBe(1);
  expect([...sessionIds][0]).toMatch(/\S{6,}/);
  expect(all.every((e) => (e.tags['ai.user.id'] ?? '').length > 0)).toBe(true);
  // The id the server issues for this user (a keyed hash), not one the browser could compute itself.
  const issued = await apiFromPage(page, '/api/telemetry-user', tokens.access_token);
  const expectedUser = (issued.body as { id: string }).id;
  expect(expectedUser).toMatch(/^[A-Za-z0-9_-]{24}$/);
  expect(expectedUser).not.toBe(unsaltedId(IDP, 'admin'));
  const signedOutHome = pageViews.find((e) => e.data.baseData.name === 'Home');
  expect(signedOutHome?.tags['ai.user.authUserId']).toBeUndefined();
  expect(profileView?.tags['ai.user.authUserId']).toBe(expectedUser);
  expect(renderError?.tags['ai.user.authUserId']).toBe(expectedUser);

  // The leak scan: no code, state, token or Authorization header in anything posted.
  expectNoSecretsPosted(telemetry.posts, new URL(callbackUrl), tokens, [
    'admin@example.com',
    'Ada Admin',
    'Bearer ',
    'DPoP ',
  ]);

  // Only the configured endpoint was called, and the collector stored everything.
  const origins = new Set(telemetry.requests.map((request) => new URL(request.url()).origin));
  expect([...origins].sort()).toEqual([APP, IDP].sort());
  expect(telemetry.posts.every((post) => post.url.startsWith(`${APP}/v2`))).toBe(true);
  await expect.poll(() => telemetry.posts.every((post) => post.status === 200)).toBe(true);
  for (const post of telemetry.posts) expect(post.answer?.itemsAccepted).toBe(post.envelopes.length);
});

for (const [mode, offset] of [
  ['browser', 26],
  ['bff', 108],
] as const) {
  test(`in ${mode} mode, an API call's dependency carries the trace context the server received`, async ({
    page,
  }) => {
    // The token vault makes the call from its worker, which no browser driver reports: a proxy in front
    // of the app sees what the browser sent (in BFF mode, the page's own fetch, tracked by the SDK).
    const proxy = await recordingProxy();
    const server = await startServer(offset, { PUBLIC_ORIGIN: proxy.origin, OIDC_MODE: mode });
    proxy.target(server.origin);
    try {
      const telemetry = await recordTelemetry(page);
      await page.goto(`${proxy.origin}/`);
      await accept(page);
      await signIn(page, ACCOUNTS.admin, server.provider);
      await page.goto(`${proxy.origin}/diagnostics`);
      await waitForFetchTracking(page);
      const before = proxy.seen.length;
      await page.getByRole('button', { name: 'Call the API' }).click();
      await expect(page.getByRole('status')).toHaveText('The API answered for admin.');
      const call = proxy.seen.slice(before).find((r) => r.path === '/api/me');
      const [version, traceId, spanId, flags] = String(call?.headers.traceparent).split('-');
      expect([version, flags]).toEqual(['00', '01']);
      expect(traceId).toMatch(/^[0-9a-f]{32}$/);
      await hidePage(page);

      // The dependency is the call's span (its id), in the call's trace (its operation).
      const dependency = () =>
        telemetry
          .ofType('RemoteDependencyData')
          .find((e) => String(e.data.baseData.id).includes(String(spanId)));
      await expect.poll(() => dependency()?.tags['ai.operation.id']).toBe(traceId);
      expect(dependency()?.data.baseData).toMatchObject({ type: 'Fetch', resultCode: '200' });
      expect(String(dependency()?.data.baseData.data)).toMatch(/\/api\/me$/);
      // The target is the host called, as the SDK's own fetch tracking reports it.
      expect(dependency()?.data.baseData.target).toBe(new URL(proxy.origin).host);
      // Only the app's API gets a trace header (and in BFF mode its session calls, fetches of the page
      // too): none of the requests the browser sent the app otherwise.
      for (const request of proxy.seen.filter((r) => !/^\/(api|bff)\//.test(r.path))) {
        expect(request.headers.traceparent).toBeUndefined();
      }
    } finally {
      await server.stop();
      await proxy.close();
    }
  });
}

test('sign-out clears the authenticated user and starts fresh anonymous ids; the leak scan covers it', async ({
  page,
}) => {
  const telemetry = await recordTelemetry(page);
  await page.goto('/');
  await accept(page);
  await signIn(page, ACCOUNTS.alice);
  const idToken = await sessionTokens(page);
  expect(idToken.id_token).toMatch(/^ey/);
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('api-me')).toContainText('"sub": "alice"');
  await hidePage(page);
  await expect
    .poll(() => telemetry.envelopes().filter((e) => e.tags['ai.user.authUserId']).length)
    .toBeGreaterThan(0);
  const signedIn = telemetry.envelopes().filter((e) => e.tags['ai.user.authUserId']);
  const oldUsers = new Set(signedIn.map((e) => e.tags['ai.user.id']));
  const oldSessions = new Set(signedIn.map((e) => e.tags['ai.session.id']));

  await signOutThroughProvider(page);
  // The document the provider sent the browser back to began then, by the browser's own clock (its
  // page view may have been timed before this test saw it arrive).
  const returned = await page.evaluate(() => new Date(Math.floor(performance.timeOrigin)).toISOString());
  expect(page.url()).toBe(`${APP}/`);
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();

  // What happens after sign-out carries new anonymous ids, which nothing links to the old ones.
  await waitForSdk(page);
  await hidePage(page);
  const after = () => telemetry.envelopes().filter((e) => e.time >= returned);
  await expect.poll(() => after().length).toBeGreaterThan(0);
  for (const envelope of after()) {
    expect(envelope.tags['ai.user.authUserId']).toBeUndefined();
    expect(oldUsers.has(envelope.tags['ai.user.id'] ?? '')).toBe(false);
    expect(oldSessions.has(envelope.tags['ai.session.id'] ?? '')).toBe(false);
  }
  const cookies = await page.context().cookies();
  const aiUser = cookies.find((cookie) => cookie.name === 'ai_user')?.value ?? '';
  for (const old of oldUsers) expect(aiUser).not.toContain(old ?? '');
  const sentBeforeReturn = telemetry.posts.length;
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByLabel('Username')).toBeVisible(); // signed out: /profile goes to sign-in
  // Leaving the page the provider sent us back to hands its items over: the scan must include them.
  await expect.poll(() => telemetry.posts.length).toBeGreaterThan(sentBeforeReturn);
  for (const post of telemetry.posts) {
    expect(post.body).not.toContain(idToken.id_token);
    expect(post.body).not.toContain('id_token_hint=ey');
  }
});

test('unsent items survive a reload and are sent when the endpoint is back', async ({ page, browser }) => {
  test.setTimeout(90_000);
  let down = true;
  const telemetry = await recordTelemetry(page, { down: () => down });
  const consoleMessages: string[] = [];
  page.on('console', (message) => consoleMessages.push(message.text()));

  await page.goto('/nowhere-while-down');
  await accept(page);
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  await waitForSdk(page);
  // The SDK posts the page view and is refused: it keeps the item in its session buffer and retries.
  await expect.poll(() => telemetry.posts.some((post) => post.status === 503)).toBe(true);
  expect(consoleMessages.length).toBeLessThan(5); // the console is not flooded

  // The endpoint comes back; the visitor reloads before the next retry.
  down = false;
  const reloadedAt = Date.now();
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  await waitForSdk(page);
  await hidePage(page);
  // Delivered once the endpoint was back (the SDK may hand it over at the reload's page hide, or the new
  // page resend it from its buffer), and stored exactly once. The store is the judge, not the posts this
  // test records: in one full run none of them showed the item delivered within 30 s, and 40 runs under
  // load did not do it again, so which post went unrecorded is not known.
  const sessionId = telemetry.ofType('PageviewData')[0]?.tags['ai.session.id'] ?? '';
  expect(sessionId).not.toBe('');
  const store = await storeReader(browser);
  try {
    await expect
      .poll(() => store.pageViews(sessionId, 'Not found', reloadedAt), { timeout: 30_000 })
      .toBeGreaterThanOrEqual(1);
    expect(await store.pageViews(sessionId, 'Not found', reloadedAt)).toBe(1);
  } finally {
    await store.close();
  }
});

test('an item the SDK delivers twice across a reload is stored once', async ({ page, browser }) => {
  test.setTimeout(90_000);
  // The collector stores the page view, but the answer never reaches the page: the SDK keeps the item
  // in its session buffer and, after the reload, sends it again.
  let hold = true;
  const telemetry = await recordTelemetry(page, { holdAnswers: () => hold });
  await page.goto('/nowhere-sent-twice');
  await accept(page);
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  await waitForSdk(page);
  const first = () =>
    telemetry.posts
      .filter((post) => post.status === 200)
      .flatMap((post) => post.envelopes)
      .filter((e) => e.data.baseType === 'PageviewData' && e.data.baseData.name === 'Not found');
  await expect.poll(() => first().length, { timeout: 30_000 }).toBeGreaterThanOrEqual(1);
  const original = first()[0]!;
  const sameItem = () => first().filter((e) => JSON.stringify(e) === JSON.stringify(original)).length;

  hold = false;
  const reloadedAt = Date.now();
  await page.reload();
  await expect(page.getByRole('heading', { name: 'Page not found' })).toBeVisible();
  await waitForSdk(page);
  await hidePage(page);
  // The very same envelope reached the collector twice (or more)...
  await expect.poll(sameItem, { timeout: 30_000 }).toBeGreaterThanOrEqual(2);
  // ...and the store holds it once.
  expect(Date.parse(original.time)).toBeLessThan(reloadedAt);
  const store = await storeReader(browser);
  try {
    expect(await store.pageViews(original.tags['ai.session.id'] ?? '', 'Not found', reloadedAt)).toBe(1);
  } finally {
    await store.close();
  }
});

test('when the SDK cannot load, the app works as before', async ({ page }) => {
  const consoleMessages: string[] = [];
  const requests: Request[] = [];
  page.on('console', (message) => consoleMessages.push(message.text()));
  page.on('request', (request) => requests.push(request));
  await page.route(/\/assets\/sdk-[\w-]+\.js$/, (route) => route.abort());
  await page.goto('/');
  await accept(page);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await logInAtProvider(page, ACCOUNTS.alice);
  await expect(page.getByTestId('display-name')).toHaveText('Alice Liddell');
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('api-me')).toContainText('"sub": "alice"');
  // One short warning per page load, nothing more.
  const pageLoads = requests.filter(
    (request) => request.resourceType() === 'document' && request.url().startsWith(APP),
  );
  expect(consoleMessages.filter((text) => /telemetry/i.test(text))).toHaveLength(pageLoads.length);
});

test('TELEMETRY_CONSENT=implied reports without a banner', async ({ page }) => {
  const telemetry = await recordTelemetry(page);
  await page.goto(APP_WITHOUT_PROVIDER);
  await expect(page.getByRole('heading', { name: 'Welcome to Gatehouse' })).toBeVisible();
  await waitForSdk(page);
  await expect(page.getByRole('dialog', { name: 'Usage data' })).toBeHidden();
  await hidePage(page);
  await expect
    .poll(() => telemetry.ofType('PageviewData').map((e) => e.data.baseData.name))
    .toContain('Home');
});

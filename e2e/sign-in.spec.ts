import { expect, type Page } from '@playwright/test';
import { APP, IDP } from '../playwright.config';
import {
  ACCOUNTS,
  historyUrls,
  issuedGrants,
  logInAtProvider,
  misbehave,
  pendingSignInRequests,
  sessionTokens,
  signIn,
  signOutThroughProvider,
  storedSession,
  test,
} from './support';

/** What the browser refused under a Content-Security-Policy (the app's or the provider's), as it logs it. */
function cspRefusals(page: Page): string[] {
  const refusals: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refusals.push(message.text());
  });
  return refusals;
}

test('a newcomer signs in, stays signed in across a reload, and no code or state is left behind', async ({
  page,
}) => {
  // The provider's pages too: their form-action must let the sign-in's redirect reach the app.
  const refusals = cspRefusals(page);

  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'Welcome to Gatehouse' })).toBeVisible();
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();

  // The provider's own login page, with labelled fields and the demo accounts as a hint.
  await expect(page.getByLabel('Username')).toBeVisible();
  await expect(page.getByLabel('Password')).toBeVisible();
  await expect(page.getByText('alice', { exact: false }).first()).toBeVisible();
  await logInAtProvider(page, ACCOUNTS.alice);

  await expect(page.getByTestId('display-name')).toHaveText('Alice Liddell');
  await expect(page.getByRole('button', { name: 'Sign out' })).toBeVisible();
  await expect(page).toHaveURL(`${APP}/`);
  expect(await issuedGrants(page)).toHaveLength(1); // the callback is processed exactly once
  for (const url of [page.url(), ...(await historyUrls(page))].filter((u) => u.startsWith(APP))) {
    expect(url).not.toMatch(/[?&#](code|state|session_state)=/);
  }

  await page.reload();
  await expect(page.getByTestId('display-name')).toHaveText('Alice Liddell');
  expect(refusals).toEqual([]);
});

test('a reload of a signed-in page never shows the signed-out UI, not even for a frame', async ({ page }) => {
  await page.goto('/');
  await signIn(page);
  await page.goto('/profile');
  await expect(page.getByTestId('display-name')).toHaveText('Alice Liddell');
  // From the reloaded page's first byte: every "Sign in" control and every "Checking your session"
  // placeholder that is ever rendered, and whether the signed-in name was there.
  await page.addInitScript(() => {
    const seen: string[] = [];
    (window as unknown as { renderedWhileReloading: string[] }).renderedWhileReloading = seen;
    new MutationObserver(() => {
      for (const element of Array.from(document.querySelectorAll('button, a, [aria-busy="true"]'))) {
        const text = element.textContent?.trim() ?? '';
        if (text === 'Sign in' || text.startsWith('Checking your session')) seen.push(text);
      }
      if (document.querySelector('[data-testid="display-name"]')) seen.push('signed in');
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
  for (const path of ['/', '/profile']) {
    await page.goto(path);
    await expect(page.getByTestId('display-name')).toHaveText('Alice Liddell');
    const seen = await page.evaluate(
      () => (window as unknown as { renderedWhileReloading: string[] }).renderedWhileReloading,
    );
    expect(seen).toContain('signed in');
    expect(seen.filter((text) => text !== 'signed in')).toEqual([]);
  }
});

test('the profile shows who the user is, when the session renews, and what the API sees', async ({
  page,
}) => {
  await page.goto('/');
  await signIn(page, ACCOUNTS.admin);
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('profile-name')).toHaveText('Ada Admin');
  await expect(page.getByTestId('profile-email')).toHaveText('admin@example.com');
  await expect(page.getByTestId('profile-roles')).toContainText('admin');
  await expect(page.getByTestId('profile-renews')).toHaveText(/\d{1,2}:\d{2}:\d{2}/);
  const answer = JSON.parse((await page.getByTestId('api-me').textContent()) ?? '{}') as Record<
    string,
    unknown
  >;
  expect(answer).toMatchObject({ sub: 'admin', issuer: IDP });
  expect(answer.roles).toContain('admin');
});

test('opening /profile signed out goes through sign-in and comes back to /profile', async ({ page }) => {
  await page.goto('/profile?tab=details');
  await logInAtProvider(page, ACCOUNTS.alice);
  await expect(page).toHaveURL(`${APP}/profile?tab=details`);
  await expect(page.getByTestId('profile-name')).toHaveText('Alice Liddell');
});

test('sign-out ends the session at the provider, removes the tokens and returns home', async ({ page }) => {
  const endSession: string[] = [];
  const refusals = cspRefusals(page);
  page.on('request', (request) => {
    if (request.url().startsWith(`${IDP}/session/end`)) endSession.push(request.url());
  });
  await page.goto('/');
  await signIn(page);
  expect(await storedSession(page)).not.toBeNull();

  await signOutThroughProvider(page);
  await expect(page).toHaveURL(`${APP}/`);
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(await storedSession(page)).toBeNull();
  const first = new URL(endSession[0] ?? 'http://missing');
  expect(first.searchParams.get('id_token_hint')).toBeTruthy();
  expect(first.searchParams.get('client_id')).toBe('gatehouse');
  expect(first.searchParams.get('state')).toBeTruthy(); // RP-Initiated Logout 1.0, 2
  expect(first.searchParams.get('post_logout_redirect_uri')).toBe(`${APP}/`);
  expect(page.url()).toBe(`${APP}/`); // the provider's state answer is taken out of the address
  expect(await pendingSignInRequests(page)).toEqual([]);

  // The provider's session is gone too: signing in again asks for the password.
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByLabel('Username')).toBeVisible();
  expect(refusals).toEqual([]);
});

test('signing in and out in one tab is reflected in every other tab within a second', async ({ context }) => {
  const first = await context.newPage();
  const second = await context.newPage();
  await first.goto('/');
  await second.goto('/');
  await expect(second.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();

  await signIn(first);
  await expect(second.getByTestId('display-name')).toHaveText('Alice Liddell', { timeout: 1_000 });

  // A tab opened later gets the session from the others.
  const third = await context.newPage();
  await third.goto('/profile');
  await expect(third.getByTestId('profile-name')).toHaveText('Alice Liddell');

  await second.getByRole('button', { name: 'Sign out' }).click();
  await expect(first.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible({
    timeout: 1_000,
  });
  expect(await storedSession(first)).toBeNull();
});

test('tokens are renewed silently with the refresh token before they expire', async ({ page, request }) => {
  await misbehave(request, null, { accessTokenTtlSeconds: 20 });
  await page.goto('/');
  await signIn(page);
  const before = await sessionTokens(page);

  await expect
    .poll(async () => (await sessionTokens(page)).expires_at ?? 0, { timeout: 25_000 })
    .toBeGreaterThan(before.expires_at ?? 0);
  const after = await sessionTokens(page);
  expect(after.refresh_token).not.toBe(before.refresh_token); // rotated
  await expect(page.getByTestId('display-name')).toHaveText('Alice Liddell');
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('api-me')).toContainText('"sub": "alice"');
});

test('a failed renewal signs the user out with a sentence, and never loops through sign-in', async ({
  page,
  request,
}) => {
  await misbehave(request, null, { accessTokenTtlSeconds: 20 });
  await page.goto('/profile');
  await logInAtProvider(page, ACCOUNTS.alice);
  await expect(page.getByTestId('profile-name')).toHaveText('Alice Liddell');
  const toProvider: string[] = [];
  page.on('request', (req) => {
    if (req.isNavigationRequest() && req.url().startsWith(IDP)) toProvider.push(req.url());
  });
  await misbehave(request, 'refresh-fails');

  await expect(page.getByRole('status')).toContainText('could not be renewed', { timeout: 25_000 });
  // The guard shows this page only when it has decided not to send the user to sign in; a redirect,
  // had one been started, would have stored a sign-in request and asked the provider.
  await expect(page.getByRole('heading', { name: 'Sign in required' })).toBeVisible();
  await expect(page).toHaveURL(`${APP}/profile`);
  expect(await storedSession(page)).toBeNull();
  expect(await pendingSignInRequests(page)).toEqual([]);
  expect(toProvider).toEqual([]);
});

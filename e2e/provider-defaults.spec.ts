import { expect, type Page } from '@playwright/test';
import { APP, IDP } from '../playwright.config';
import {
  ACCOUNTS,
  logInAtProvider,
  grantsOf,
  issuedGrants,
  misbehave,
  pendingSignInRequests,
  sessionTokens,
  signIn,
  signOutThroughProvider,
  storedSession,
  test,
} from './support';

/**
 * The journey against a provider with the defaults independent providers have (ADR 0022): each mode of
 * the local provider reproduces one of them.
 */

/**
 * The page's requests to the provider (its navigations: `/auth`, `/session/end`), by path. The token
 * vault's (token, revocation) come from its worker; the provider's test controls tell what they did.
 */
function providerRequests(page: Page) {
  const seen: URL[] = [];
  page.on('request', (request) => {
    if (request.url().startsWith(IDP)) seen.push(new URL(request.url()));
  });
  return { to: (path: string) => seen.filter((url) => url.pathname === path) };
}

test('a provider without offline_access: sign-in asks only for what it lists, and still renews', async ({
  page,
  request,
}) => {
  await misbehave(request, 'no-offline-access', { accessTokenTtlSeconds: 20 });
  const provider = providerRequests(page);
  await page.goto('/');
  await signIn(page);
  expect(provider.to('/auth')[0]?.searchParams.get('scope')).toBe('openid profile email');
  const before = await sessionTokens(page);
  expect(before.refresh_token).toEqual(expect.any(String));

  await expect
    .poll(async () => (await sessionTokens(page)).expires_at ?? 0, { timeout: 25_000 })
    .toBeGreaterThan(before.expires_at ?? 0);
  await expect(page.getByTestId('display-name')).toHaveText(ACCOUNTS.alice.name);
});

test('a provider without an end-session endpoint: signed out here, and told the provider session may remain', async ({
  page,
  request,
}) => {
  await misbehave(request, 'no-end-session');
  const provider = providerRequests(page);
  await page.goto('/profile');
  await logInAtProvider(page, ACCOUNTS.alice);
  await expect(page.getByTestId('profile-name')).toHaveText(ACCOUNTS.alice.name);

  await page.getByRole('button', { name: 'Sign out' }).click();
  await expect(page.getByRole('status')).toHaveText(/session at the provider may remain/);
  await expect(page).toHaveURL(`${APP}/`); // the signed-out home page, not a sign-in
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(await storedSession(page)).toBeNull();
  expect(provider.to('/session/end')).toEqual([]);
  expect(provider.to('/auth')).toHaveLength(1); // the sign-in above, and no other
});

test('a provider that needs state to redirect after logout brings the user back home', async ({
  page,
  request,
}) => {
  await misbehave(request, 'logout-needs-state');
  await page.goto('/');
  await signIn(page);
  await signOutThroughProvider(page);
  expect(page.url()).toBe(`${APP}/`);
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByLabel('Username')).toBeVisible(); // the provider session ended too
});

for (const path of ['/profile', '/usage', '/diagnostics']) {
  test(`sign-out from ${path} ends at the provider however slow revocation is, and never signs back in`, async ({
    page,
    request,
  }) => {
    await misbehave(request, 'slow-revocation');
    const provider = providerRequests(page);
    await page.goto('/');
    await signIn(page, ACCOUNTS.admin);
    await page.goto(path);
    await expect(page.getByRole('main').getByRole('heading', { level: 1 })).toBeVisible();
    const { refresh_token } = await sessionTokens(page);
    const uid = String((await issuedGrants(page)).at(-1)?.sessionUid);
    const revoked = async () => (await grantsOf(IDP, { uid })).flatMap((grant) => grant.revoked as string[]);
    const signInsBefore = provider.to('/auth').length;

    await signOutThroughProvider(page);
    expect(page.url()).toBe(`${APP}/`);
    await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
    // The vault asked for one revocation, without waiting for its answer to sign out.
    await expect.poll(revoked, { timeout: 10_000 }).toEqual(['refresh_token']);
    expect(provider.to('/auth')).toHaveLength(signInsBefore); // no sign-in started behind the user's back
    expect(await storedSession(page)).toBeNull();
    expect(await pendingSignInRequests(page)).toEqual([]);

    // The old refresh token is dead at the provider.
    const refresh = await request.post(`${IDP}/token`, {
      form: { grant_type: 'refresh_token', refresh_token: refresh_token ?? '', client_id: 'gatehouse' },
    });
    expect(refresh.status()).toBe(400);
  });
}

test('a revocation refused to a public client is a console warning, and sign-out goes on', async ({
  page,
  request,
}) => {
  await misbehave(request, 'revocation-refuses-public');
  const warnings: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'warning') warnings.push(message.text());
  });
  await page.goto('/');
  await signIn(page);
  await signOutThroughProvider(page);
  expect(page.url()).toBe(`${APP}/`);
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(warnings).toEqual(
    expect.arrayContaining([
      expect.stringContaining('refused to revoke the refresh token (401 invalid_client)'),
    ]),
  );
});

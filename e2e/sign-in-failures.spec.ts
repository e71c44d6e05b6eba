import { expect, type Page } from '@playwright/test';
import { APP, APP_WITHOUT_PROVIDER } from '../playwright.config';
import {
  ACCOUNTS,
  logInAtProvider,
  misbehave,
  signIn,
  signOutThroughProvider,
  storedSession,
  test,
} from './support';

async function expectFailedSignIn(page: Page, why: RegExp) {
  await expect(page.getByRole('heading', { name: 'Sign-in failed' })).toBeVisible();
  await expect(page.getByRole('alert')).toHaveText(why);
  await expect(page.getByRole('button', { name: 'Try again' })).toBeVisible();
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  expect(await storedSession(page)).toBeNull();
  expect(page.url()).toBe(`${APP}/callback`);
}

const rejectedIdTokens: Array<[mode: string, why: RegExp]> = [
  ['wrong-issuer', /ID token was rejected: it was issued by another issuer/],
  ['wrong-audience', /ID token was rejected: it was issued for another client/],
  ['wrong-nonce', /ID token was rejected: its nonce does not match this sign-in/],
  ['expired', /ID token was rejected: it has expired/],
  // oidc-client-ts refuses an ID token without sub itself, with a plain Error: no finer reason is typed.
  ['missing-sub', /answer could not be accepted/],
  ['missing-iat', /ID token was rejected: its iat claim is missing or invalid/],
  ['bad-signature', /ID token was rejected: its signature does not verify/],
  ['userinfo-sub-mismatch', /user info is for another user than its ID token/],
];

for (const [mode, why] of rejectedIdTokens) {
  test(`an ID token from a misbehaving provider (${mode}) leaves no session`, async ({ page, request }) => {
    await page.goto('/');
    await misbehave(request, mode);
    await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
    await logInAtProvider(page, ACCOUNTS.alice);
    await expectFailedSignIn(page, why);
  });
}

for (const mode of ['rotated-key', 'no-kid']) {
  test(`an ID token signed with a ${mode} is accepted`, async ({ page, request }) => {
    await page.goto('/');
    await misbehave(request, mode);
    try {
      await signIn(page);
    } finally {
      // The rotated key, once used, is on every JWKS answer to a connection that presented no scope (a
      // vault's key request beside its token request): gone with its scope, before the no-kid test, whose
      // token names no key and needs the JWKS to hold only one.
      await misbehave(request, null);
    }
  });
}

for (const [error, why] of [
  ['access_denied', /cancelled or access was denied/],
  ['login_required', /needs you to sign in again/],
] as const) {
  test(`the provider's ${error} error is explained, and "Try again" works`, async ({ page, request }) => {
    await page.goto('/');
    await misbehave(request, `authorize-error:${error}`);
    await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
    await expectFailedSignIn(page, why);

    await misbehave(request, null);
    await page.getByRole('button', { name: 'Try again' }).click();
    await logInAtProvider(page, ACCOUNTS.alice);
    await expect(page.getByTestId('display-name')).toHaveText('Alice Liddell');
  });
}

test('cancelling at the provider returns a clear access_denied failure', async ({ page }) => {
  await page.goto('/');
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('button', { name: 'Cancel' }).click();
  await expectFailedSignIn(page, /cancelled or access was denied/);
});

test('a replayed or tampered callback is refused', async ({ page }) => {
  let callback = '';
  page.on('request', (request) => {
    if (request.url().startsWith(`${APP}/callback?`)) callback = request.url();
  });
  await page.goto('/');
  await signIn(page);
  expect(callback).toContain('code=');
  await signOutThroughProvider(page);
  expect(page.url()).toBe(`${APP}/`);

  await page.goto(callback);
  await expectFailedSignIn(page, /does not belong to a sign-in started in this tab/);

  const tampered = new URL(callback);
  tampered.searchParams.set('state', 'forged');
  await page.goto(tampered.toString());
  await expectFailedSignIn(page, /does not belong to a sign-in started in this tab/);
});

test('a discovery document naming another issuer stops sign-in before leaving the app', async ({
  page,
  request,
}) => {
  await misbehave(request, 'discovery-issuer-mismatch');
  await page.goto('/');
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('status')).toContainText('names the issuer');
  await expect(page.getByRole('status')).toContainText('Sign-in failed');
  await expect(page).toHaveURL(`${APP}/`);
  expect(await storedSession(page)).toBeNull();
});

test('a provider that cannot be reached does not break the public pages', async ({ page }) => {
  const errors: string[] = [];
  page.on('pageerror', (error) => errors.push(error.message));
  await page.goto(APP_WITHOUT_PROVIDER);
  await expect(page.getByRole('heading', { name: 'Welcome to Gatehouse' })).toBeVisible();
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await expect(page.getByRole('status')).toContainText('could not be reached');
  await expect(page.getByRole('heading', { name: 'Welcome to Gatehouse' })).toBeVisible();
  expect(errors).toEqual([]);
});

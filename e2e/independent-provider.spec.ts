import type { ChildProcess } from 'node:child_process';
import { expect, test, type Page } from '@playwright/test';
import { port } from '../playwright.config';
import {
  logInAtProvider,
  requireTool,
  signIn,
  startServer,
  storedSession,
  type StartedServer,
} from './support';
import { recordingProxy, type RecordingProxy } from './recording-proxy';
import { DOT_BFF_SECRET, startDjangoOAuthToolkit, stopDjangoOAuthToolkit } from './django-oauth-toolkit';

/**
 * The whole journey against an independent OpenID provider, Django OAuth Toolkit from Debian
 * (scripts/django-oauth-toolkit.mjs installs and configures it): opaque access tokens, no
 * offline_access scope, no end-session endpoint, no revocation in discovery. Gatehouse is configured
 * as a newcomer would: authority and client id, nothing else.
 */
const DOT = `http://localhost:${port(70)}`;
const ISSUER = `${DOT}/o`;
const ALICE = { username: 'alice', password: 'alice', name: 'Alice Liddell', email: 'alice@example.com' };
/** Short-lived tokens, so the walk sees a renewal. */
const ACCESS_TOKEN_TTL = 20;

requireTool('django-oauth-toolkit');

let provider: ChildProcess;
let server: StartedServer;
/** The same app in BFF mode (OIDC_MODE=bff), DOT's confidential client gatehouse-bff. */
let bff: StartedServer;
const BFF_ORIGIN = `http://localhost:${port(72)}`;
/**
 * The app, behind a proxy that sees the token vault's API calls as the browser sent them: the only
 * place a test can read this provider's tokens (the app never shows them).
 */
let app: RecordingProxy;

test.beforeAll(async () => {
  test.setTimeout(120_000);
  app = await recordingProxy();
  provider = await startDjangoOAuthToolkit({
    port: port(70),
    appOrigin: app.origin,
    bffOrigin: BFF_ORIGIN,
    accessTokenTtl: ACCESS_TOKEN_TTL,
  });
  server = await startServer(71, {
    OIDC_AUTHORITY: ISSUER,
    OIDC_CLIENT_ID: 'gatehouse',
    TELEMETRY_CONSENT: 'implied',
    PUBLIC_ORIGIN: app.origin,
  });
  app.target(server.origin);
  bff = await startServer(72, {
    OIDC_MODE: 'bff',
    OIDC_AUTHORITY: ISSUER,
    OIDC_CLIENT_ID: 'gatehouse-bff',
    OIDC_CLIENT_SECRET: DOT_BFF_SECRET,
    TELEMETRY_CONSENT: 'implied',
  });
});

test.afterAll(async () => {
  await Promise.all([server?.stop(), bff?.stop()]);
  await app?.close();
  await stopDjangoOAuthToolkit(provider);
});

/** Signs Alice in at DOT's own page from the app at `origin`, then reloads: still signed in. */
async function signInAndReload(page: Page, origin: string) {
  await test.step('sign in', async () => {
    await page.goto(`${origin}/`);
    await signIn(page, ALICE, DOT);
  });
  await test.step('reload', async () => {
    await page.reload();
    await expect(page.getByTestId('display-name')).toHaveText(ALICE.name);
  });
}

async function apiMe(page: Page): Promise<Record<string, unknown>> {
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByTestId('api-me')).toContainText('"sub"');
  return JSON.parse((await page.getByTestId('api-me').textContent()) ?? '{}') as Record<string, unknown>;
}

test('sign in, reload, the API with opaque tokens, renewal, sign out and sign in again', async ({ page }) => {
  test.setTimeout(120_000);
  /** The access token of the vault's latest API call. */
  const lastToken = () =>
    /^Bearer (\S+)$/.exec(app.seen.findLast((r) => r.path === '/api/me')?.headers.authorization ?? '')?.[1];

  await signInAndReload(page, app.origin);

  await test.step('/api/me with the provider’s default (opaque) access token', async () => {
    const me = await apiMe(page);
    expect(lastToken()?.split('.')).toHaveLength(1);
    expect(me).toMatchObject({
      sub: '1',
      name: ALICE.name,
      email: ALICE.email,
      issuer: ISSUER,
      verifiedBy: 'userinfo',
    });
  });

  await test.step('renewal with the refresh token', async () => {
    // The vault renews before the token expires: the API calls go with the new one.
    const before = lastToken();
    expect(before).toBeTruthy();
    await expect
      .poll(
        async () => {
          await page.goto(`${app.origin}/`);
          expect(await apiMe(page)).toMatchObject({ sub: '1', verifiedBy: 'userinfo' });
          return lastToken();
        },
        { timeout: (ACCESS_TOKEN_TTL + 10) * 1000, intervals: [2_000] },
      )
      .not.toBe(before);
  });

  await test.step('sign out (the provider has no end-session endpoint)', async () => {
    await page.goto(`${app.origin}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
    expect(await storedSession(page)).toBeNull();
    // The user is told their session at the provider may remain (ADR 0022).
    await expect(page.getByRole('status')).toContainText(/provider/i);
  });

  await test.step('sign in again', async () => {
    await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
    // The provider's session may still be there (nothing ended it): then no form is shown.
    const signedIn = page.getByTestId('display-name');
    await expect(signedIn.or(page.getByLabel('Username'))).toBeVisible();
    if (await page.getByLabel('Username').isVisible()) await logInAtProvider(page, ALICE, DOT);
    await expect(signedIn).toHaveText(ALICE.name);
    expect(await apiMe(page)).toMatchObject({ sub: '1', verifiedBy: 'userinfo' });
  });
});

test('in BFF mode: sign in, reload, the API with opaque tokens past their lifetime, sign out', async ({
  page,
}) => {
  test.setTimeout(120_000);
  await signInAndReload(page, bff.origin);

  await test.step('/api/me, checked through userinfo with the token the server holds', async () => {
    expect(await apiMe(page)).toMatchObject({
      sub: '1',
      name: ALICE.name,
      issuer: ISSUER,
      verifiedBy: 'userinfo',
    });
  });

  await test.step('the API still answers after the access token’s lifetime: the server renewed it', async () => {
    await page.waitForTimeout((ACCESS_TOKEN_TTL + 2) * 1000);
    await page.goto(`${bff.origin}/`);
    expect(await apiMe(page)).toMatchObject({ sub: '1', verifiedBy: 'userinfo' });
  });

  await test.step('sign out (the provider has no end-session endpoint)', async () => {
    await page.goto(`${bff.origin}/`);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
    await expect(page.getByRole('status')).toContainText(/provider/i);
    const me = await page.request.get(`${bff.origin}/api/me`, { headers: { 'X-CSRF': '1' } });
    expect(me.status()).toBe(401);
  });
});

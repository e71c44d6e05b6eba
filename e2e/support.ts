import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test as base, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';
import {
  CookieJar,
  authorizationRequest,
  form,
  logInAtForm,
} from '../apps/dev-idp/src/test-support/oidc-flow';
import { IDP, TEST_CONTROLS_SECRET, port } from '../playwright.config';
import { inCi, lacking, type ToolName } from '../scripts/test-tools.mjs';
import { callApi, type ApiAnswer } from './browsers/in-page';

export const ACCOUNTS = {
  alice: { username: 'alice', password: 'alice', name: 'Alice Liddell', email: 'alice@example.com' },
  admin: { username: 'admin', password: 'admin', name: 'Ada Admin', email: 'admin@example.com' },
} as const;

export type Account = (typeof ACCOUNTS)[keyof typeof ACCOUNTS];

/**
 * Skips the test (or every test of the file, when called at its top) where `tool` cannot be had,
 * saying what is missing and how to get it; in CI (CI=true) fails instead: nothing is skipped there.
 */
export function requireTool(tool: ToolName): void {
  const missing = lacking(tool);
  if (missing && inCi()) throw new Error(`${missing} In CI every test must run.`);
  base.skip(missing !== null, missing ?? '');
}

/**
 * The scope of the provider's test controls that belongs to one test (and its retry), so that tests
 * running side by side against the shared provider never see each other's settings.
 */
function controlsScope(info: TestInfo): string {
  return `${info.testId}.${info.repeatEachIndex}.${info.retry}`;
}

/**
 * The User-Agent product token that puts the browser's requests in the test's scope
 * (apps/dev-idp/src/test-controls.ts `TEST_CONTROL_SCOPE_AGENT`). Appended, so the browser still reads
 * as the browser it is (the collector tells browsers by their tokens).
 */
const SCOPE_AGENT = 'GatehouseTestScope';

/**
 * Playwright's `test`, whose pages (the `page` and `context` fixtures) carry the test's scope of the
 * provider's test controls: every spec that calls `misbehave` takes `test` from here.
 */
export const test = base.extend({
  userAgent: async ({ userAgent }, use, info) => {
    if (!userAgent) throw new Error('The project names no User-Agent to add the test-controls scope to.');
    await use(`${userAgent} ${SCOPE_AGENT}/${controlsScope(info)}`);
  },
});

/**
 * Makes the local provider misbehave in one way (or behave again with `null`) for this test's pages
 * (those of `test` above) only.
 */
export async function misbehave(
  request: APIRequestContext,
  mode: string | null,
  settings: { accessTokenTtlSeconds?: number } = {},
) {
  const response = await request.post(`${IDP}/__test/misbehave`, {
    data: { scope: controlsScope(base.info()), mode, ...settings },
    headers: { 'X-Test-Controls-Secret': TEST_CONTROLS_SECRET },
  });
  expect(response.status()).toBe(204);
}

/** Fills the provider's login form, as a person would. */
export async function logInAtProvider(
  page: Page,
  account: { username: string; password: string },
  provider: string = IDP,
) {
  await expect(page).toHaveURL(new RegExp(`^${provider}/`));
  await page.getByLabel('Username').fill(account.username);
  await page.getByLabel('Password').fill(account.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

/** From any Gatehouse page: "Sign in", the provider's form, and back signed in. */
export async function signIn(
  page: Page,
  account: { username: string; password: string; name: string } = ACCOUNTS.alice,
  provider: string = IDP,
) {
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await logInAtProvider(page, account, provider);
  await expect(page.getByTestId('display-name')).toHaveText(account.name);
}

/**
 * Clicks Sign out and waits until the provider has sent the browser back to the app, that page has
 * loaded and the app has taken the provider's `state` out of the address. Waiting for the response
 * alone is not enough: until the new page commits, the old one is the page, already loaded, and a
 * navigation started then is interrupted by the provider's redirect.
 */
export async function signOutThroughProvider(page: Page, provider: string = IDP): Promise<void> {
  let endSessionSent = false;
  const onRequest = (request: { url(): string }) => {
    if (request.url().startsWith(`${provider}/session/end`)) endSessionSent = true;
  };
  page.on('request', onRequest);
  const backHome = page.waitForEvent(
    'framenavigated',
    (frame) => frame === page.mainFrame() && endSessionSent && !frame.url().startsWith(provider),
  );
  await page.getByRole('button', { name: 'Sign out' }).click();
  await backHome;
  page.off('request', onRequest);
  await page.waitForLoadState('load');
  // The provider answers with the sign-out request's `state`, which the app checks off and takes out.
  await page.waitForURL((url) => !url.searchParams.has('state'));
}

/**
 * Who this tab shows as signed in (the session hint: claims only, never a token), null when signed out.
 * The tokens themselves are in the token vault, out of the page's reach.
 */
export async function storedSession(page: Page): Promise<string | null> {
  return page.evaluate(() => sessionStorage.getItem('gatehouse.session.user'));
}

/** Sign-in requests this tab has started and not finished (oidc-client-ts keeps them by `state`, under our prefix). */
export async function pendingSignInRequests(page: Page): Promise<string[]> {
  return page.evaluate(() => Object.keys(sessionStorage).filter((key) => key.startsWith('gatehouse.oidc.')));
}

/**
 * Calls `path` of the API (GET unless `request` says otherwise) from inside `page` with `token` (the
 * latest access token the provider issued to this browser unless given), DPoP-bound or bearer as the
 * provider issued it: see browsers/in-page.ts `callApi`.
 */
export async function apiFromPage(
  page: Page,
  path: string,
  token?: string,
  request: { method?: string; body?: unknown } = {},
): Promise<ApiAnswer> {
  const tokens = await sessionTokens(page);
  return page.evaluate(callApi, {
    path,
    token: token ?? tokens.access_token ?? '',
    tokenType: tokens.token_type,
    ...request,
  });
}

/**
 * Polls `path` with `accessToken` from the page until the token's lifetime has run out, then expects
 * the API's refusal to say so: the token is first accepted (or refused for another reason), and never
 * sleeps.
 */
export async function expectRefusedOnceExpired(
  page: Page,
  path: string,
  accessToken: string,
  timeoutMs = 15_000,
): Promise<void> {
  await expect
    .poll(
      async () => {
        const { status, challenge } = await apiFromPage(page, path, accessToken);
        return `${status} ${challenge}`;
      },
      { timeout: timeoutMs },
    )
    .toMatch(/^401 .*expired/);
}

export interface SessionTokens {
  access_token: string;
  id_token: string;
  refresh_token: string;
  expires_at: number;
  /** `DPoP` when the tokens are bound to the browser's key (RFC 9449), else `Bearer`. */
  token_type: string;
}

/** The bundled provider's session cookie (apps/dev-idp/src/provider.ts names it). */
const PROVIDER_SESSION_COOKIE = 'dev_idp_session';

/** Providers of apps whose public origin is not their own (behind a proxy), by that public origin. */
const providersByPublicOrigin = new Map<string, string>();

/**
 * The bundled provider beside the app `page` is on: the port after the app's (startServer's rule), or
 * the one of the server started with that public origin.
 */
function providerOf(page: Page): string {
  const app = new URL(page.url());
  return (
    providersByPublicOrigin.get(app.origin) ?? `${app.protocol}//${app.hostname}:${Number(app.port) + 1}`
  );
}

/**
 * The tokens the provider issued to this tab's browser, latest first-class values (an empty object when
 * the tab is signed out). The app never shows them (the token vault keeps them from the page), so they
 * are read from the bundled provider's test controls, for this browser's provider session only.
 */
export async function sessionTokens(
  page: Page,
  provider: string = providerOf(page),
): Promise<Partial<SessionTokens>> {
  if (!(await storedSession(page))) return {};
  const cookie = (await page.context().cookies(provider)).find(
    (c) => c.name === PROVIDER_SESSION_COOKIE,
  )?.value;
  if (!cookie) return {};
  return issuedTokens(provider, cookie);
}

/** The token endpoint's answers to this tab's browser (its provider session), oldest first. */
export async function issuedGrants(
  page: Page,
  provider: string = providerOf(page),
): Promise<Array<Record<string, unknown>>> {
  const cookie = (await page.context().cookies(provider)).find(
    (c) => c.name === PROVIDER_SESSION_COOKIE,
  )?.value;
  return cookie ? grantsOf(provider, { cookie }) : [];
}

/**
 * The token endpoint's answers in one provider session (named by its cookie, or by its uid once it has
 * ended), oldest first, each with the tokens a revocation request named since (`revoked`).
 */
export async function grantsOf(
  provider: string,
  session: { cookie: string } | { uid: string },
): Promise<Array<Record<string, unknown>>> {
  const query =
    'cookie' in session
      ? `session=${encodeURIComponent(session.cookie)}`
      : `uid=${encodeURIComponent(session.uid)}`;
  const response = await fetch(`${provider}/__test/issued-tokens?${query}`, {
    headers: { 'X-Test-Controls-Secret': TEST_CONTROLS_SECRET },
  });
  expect(response.status).toBe(200);
  return ((await response.json()) as { grants: Array<Record<string, unknown>> }).grants;
}

/** What the provider's test controls say it issued in the provider session `cookie`, merged in order. */
export async function issuedTokens(provider: string, cookie: string): Promise<Partial<SessionTokens>> {
  const grants = await grantsOf(provider, { cookie });
  const merged: Partial<SessionTokens> = {};
  for (const grant of grants) {
    for (const [name, value] of Object.entries(grant)) {
      if (value !== undefined && value !== null) (merged as Record<string, unknown>)[name] = value;
    }
  }
  return merged;
}

/** Every URL in this tab's session history (Chrome DevTools Protocol). */
export async function historyUrls(page: Page): Promise<string[]> {
  const cdp = await page.context().newCDPSession(page);
  const { entries } = (await cdp.send('Page.getNavigationHistory')) as { entries: Array<{ url: string }> };
  await cdp.detach();
  return entries.map((entry) => entry.url);
}

export interface StartedServer {
  /** The app's origin, e.g. `http://localhost:4120`. */
  origin: string;
  /** The bundled provider's issuer (the port after the app's). */
  provider: string;
  dataDir: string;
  process: ChildProcess;
  /** Stops the server as Ctrl-C would, and resolves once it has exited. */
  stop(): Promise<void>;
}

/** An environment variable of every server `startServer` starts, set to the run's first port. */
export const SERVER_MARK = 'GATEHOUSE_E2E_SERVER_OF';

/**
 * Starts a Gatehouse server of a test's own (with its bundled provider on the next port and a fresh
 * store unless `GATEHOUSE_DATA_DIR` is given) and resolves once both answer, polling them; it rejects
 * when the server exits first or does not answer within `timeoutMs`, with what it wrote to stderr.
 */
export async function startServer(
  portOffset: number,
  env: Record<string, string> = {},
  timeoutMs = 60_000,
): Promise<StartedServer> {
  const origin = `http://localhost:${port(portOffset)}`;
  const provider = `http://localhost:${port(portOffset + 1)}`;
  // Another spec's server on these ports would answer the polls below in this one's place. (With a
  // provider of its own, OIDC_AUTHORITY, the server starts no bundled one on the next port.)
  const ports = [port(portOffset), ...(env.OIDC_AUTHORITY ? [] : [port(portOffset + 1)])];
  for (const taken of ports) {
    if (await listening(taken)) {
      throw new Error(
        `Port ${taken} (offset ${taken - port(0)}) is already in use, by another spec's server or ` +
          'program: give this spec port offsets no other spec uses.',
      );
    }
  }
  const dataDir = env.GATEHOUSE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'gatehouse-e2e-'));
  if (env.PUBLIC_ORIGIN) providersByPublicOrigin.set(new URL(env.PUBLIC_ORIGIN).origin, provider);
  const child = spawn(process.execPath, ['apps/server/dist/main.js'], {
    env: {
      ...process.env,
      PORT: String(port(portOffset)),
      IDP_PORT: String(port(portOffset + 1)),
      GATEHOUSE_DATA_DIR: dataDir,
      // A test's own server may run its bundled provider whatever NODE_ENV the runner has.
      ALLOW_BUNDLED_DEV_IDP: '1',
      // The provider's test controls: among them the tokens it issued, which the app never shows.
      DEV_IDP_TEST_CONTROLS: '1',
      DEV_IDP_TEST_CONTROLS_SECRET: TEST_CONTROLS_SECRET,
      // One server per test: the only replica, whatever NODE_ENV the runner has.
      GATEHOUSE_SINGLE_REPLICA: '1',
      // How the next run finds this server if its worker dies before stopping it (global-setup.ts).
      [SERVER_MARK]: String(port(0)),
      ...env,
    },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += String(chunk);
    process.stderr.write(chunk);
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const ready = [
    `${origin}/`,
    ...(env.OIDC_AUTHORITY ? [] : [`${provider}/.well-known/openid-configuration`]),
  ];
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(`The server on ${origin} exited with ${child.exitCode} before answering:\n${stderr}`);
    }
    const answers = await Promise.all(
      ready.map((url) =>
        fetch(url).then(
          (response) => response.ok,
          () => false,
        ),
      ),
    );
    if (answers.every(Boolean)) break;
    if (Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`The server on ${origin} did not answer within ${timeoutMs} ms:\n${stderr}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    origin,
    provider,
    dataDir,
    process: child,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      await exited;
    },
  };
}

/**
 * A spec over scripts/cluster.mjs's replicas: its tests one after the other (they share the cluster),
 * two minutes each and for `start`; without redis-server or haproxy skipped with how to get them, and in
 * CI (CI=true) a failure.
 */
export function clusterSpec(start: () => Promise<void>, stop: () => Promise<void>): void {
  base.describe.configure({ mode: 'serial' });
  base.setTimeout(120_000);
  requireTool('redis');
  requireTool('haproxy');
  base.beforeAll(async () => {
    base.setTimeout(120_000);
    await start();
  });
  base.afterAll(stop);
}

/** Where a sign-in from Node ends: the SPA's `/callback` route on `app` (the code or the error in its query). */
const toCallbackOf = (app: string) => (url: URL) => url.origin === app && url.pathname === '/callback';

/**
 * The headers of a BFF session (OIDC_MODE=bff) for `account`, signed in from Node as a browser would:
 * /bff/login, the provider's form, the server's callback. The session cookie with the custom header that
 * every cookie-authenticated call needs; the jar, for what follows.
 */
export async function bffSessionFor(
  app: string,
  account: { username: string; password: string },
): Promise<{ jar: CookieJar; headers: Record<string, string>; landedAt: URL }> {
  const jar = new CookieJar();
  // The server's part ends with its redirect to the SPA's callback route.
  const landedAt = await logInAtForm(
    jar,
    new URL(`${app}/bff/login`),
    account.username,
    account.password,
    toCallbackOf(app),
  );
  return { jar, headers: { Cookie: jar.header(), 'X-CSRF': '1' }, landedAt };
}

/**
 * A bearer access token for `account`, signed in at the bundled provider from Node as the app's client
 * (PKCE, its registered redirect URI), without a DPoP proof: for a test that reads the API as that
 * account while the browser's own tokens stay in its token vault.
 */
export async function bearerTokenFor(
  app: string,
  provider: string,
  account: { username: string; password: string },
): Promise<string> {
  const redirectUri = `${app}/callback`;
  const request = authorizationRequest(provider, {
    redirect_uri: redirectUri,
    scope: 'openid profile email',
  });
  const callback = await logInAtForm(
    new CookieJar(),
    request.url,
    account.username,
    account.password,
    toCallbackOf(app),
  );
  const code = callback.searchParams.get('code');
  if (!code) throw new Error(`The provider sent ${account.username} back without a code (${callback.href}).`);
  const token = await fetch(`${provider}/token`, {
    ...form({
      grant_type: 'authorization_code',
      client_id: 'gatehouse',
      code,
      redirect_uri: redirectUri,
      code_verifier: request.verifier,
    }),
    headers: { 'Content-Type': 'application/x-www-form-urlencoded', Origin: app },
  });
  expect(token.status).toBe(200);
  return ((await token.json()) as { access_token: string }).access_token;
}

/** Whether something accepts connections on the port on localhost. */
function listening(portNumber: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ port: portNumber, host: '127.0.0.1' });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

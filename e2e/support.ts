import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test as base, type APIRequestContext, type Page, type TestInfo } from '@playwright/test';
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

export async function storedSession(page: Page): Promise<string | null> {
  return page.evaluate(() => sessionStorage.getItem('gatehouse.session'));
}

/** Sign-in requests this tab has started and not finished (oidc-client-ts keeps them by `state`, under our prefix). */
export async function pendingSignInRequests(page: Page): Promise<string[]> {
  return page.evaluate(() => Object.keys(sessionStorage).filter((key) => key.startsWith('gatehouse.oidc.')));
}

/**
 * Calls `path` of the API (GET unless `request` says otherwise) from inside `page`, as the browser that holds the tokens can (DPoP-bound or
 * bearer): see browsers/in-page.ts `callApi`.
 */
export async function apiFromPage(
  page: Page,
  path: string,
  token?: string,
  request: { method?: string; body?: unknown } = {},
): Promise<ApiAnswer> {
  return page.evaluate(callApi, { path, token, ...request });
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

/** The tokens this tab holds (an empty object when signed out). */
export async function sessionTokens(page: Page): Promise<Partial<SessionTokens>> {
  return JSON.parse((await storedSession(page)) ?? '{}') as Partial<SessionTokens>;
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
  const dataDir = env.GATEHOUSE_DATA_DIR ?? mkdtempSync(join(tmpdir(), 'gatehouse-e2e-'));
  const child = spawn(process.execPath, ['apps/server/dist/main.js'], {
    env: {
      ...process.env,
      PORT: String(port(portOffset)),
      IDP_PORT: String(port(portOffset + 1)),
      GATEHOUSE_DATA_DIR: dataDir,
      // A test's own server may run its bundled provider whatever NODE_ENV the runner has.
      ALLOW_BUNDLED_DEV_IDP: '1',
      DEV_IDP_TEST_CONTROLS_SECRET: TEST_CONTROLS_SECRET,
      // One server per test: the only replica, whatever NODE_ENV the runner has.
      GATEHOUSE_SINGLE_REPLICA: '1',
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

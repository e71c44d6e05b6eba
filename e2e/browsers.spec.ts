import { test } from '@playwright/test';
import { port } from '../playwright.config';
import { findFirefox, findWebKit } from '../scripts/test-tools.mjs';
import { inBothModes, type Mode, WEBKIT_DRIVER } from './browsers/both-modes';
import type { BrowserSession } from './browsers/driver';
import { firefoxSession } from './browsers/firefox-session';
import { ACCESS_TOKEN_TTL_SECONDS, journey } from './browsers/journey';
import { playwrightSession } from './browsers/playwright-session';
import { webkitSession } from './browsers/webkit-session';
import { requireTool, startServer, type StartedServer } from './support';

/**
 * The user's journey (browsers/journey.ts) in each engine a user has: Chromium through Playwright, as
 * the rest of the suite; Firefox over WebDriver BiDi; WebKit (WebKitGTK) over WebDriver. A browser that
 * cannot be had here skips its run with the reason, except in CI, where it fails.
 */
test.describe.configure({ timeout: 180_000 });

let server: StartedServer;
/** The same, in BFF mode (OIDC_MODE=bff): the server is the OAuth client. */
let bff: StartedServer;
test.beforeAll(async () => {
  // As the shared server (playwright.config.ts), but with the short token lifetime the journey needs.
  // Offset 82: 90 would be port 4190, on the Fetch standard's list of blocked ports (the browsers and
  // Node's fetch refuse it).
  server = await startServer(82, {
    NODE_ENV: 'production',
    DEV_IDP_ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL_SECONDS),
  });
  bff = await startServer(104, {
    NODE_ENV: 'production',
    OIDC_MODE: 'bff',
    DEV_IDP_ACCESS_TOKEN_TTL: String(ACCESS_TOKEN_TTL_SECONDS),
  });
});
test.afterAll(async () => {
  await Promise.all([server?.stop(), bff?.stop()]);
});

async function walk(open: () => Promise<BrowserSession>, mode: Mode) {
  const session = await open();
  test.info().annotations.push({ type: 'browser', description: `${session.name}, ${mode} mode` });
  try {
    await journey(session, mode === 'bff' ? { ...bff, mode } : server);
  } finally {
    await session.close();
  }
}

// Each engine walks both modes at once (browsers/both-modes.ts): WebKit's two sessions each have a
// WebKitWebDriver of their own.
test('the journey in Chromium (Playwright), in both modes', async ({ browser }) => {
  await inBothModes((mode) => walk(() => playwrightSession(browser), mode));
});

test('the journey in Firefox (WebDriver BiDi), in both modes', async () => {
  requireTool('firefox');
  await inBothModes((mode) => walk(() => firefoxSession(findFirefox().path ?? ''), mode));
});

test('the journey in WebKit (WebKitWebDriver), in both modes', async () => {
  requireTool('webkit');
  const { driver = '', xvfb = '' } = findWebKit();
  await inBothModes((mode) => walk(() => webkitSession({ driver, xvfb }, port(WEBKIT_DRIVER[mode])), mode));
});

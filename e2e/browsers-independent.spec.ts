import type { ChildProcess } from 'node:child_process';
import { test } from '@playwright/test';
import { port } from '../playwright.config';
import { findFirefox, findWebKit } from '../scripts/test-tools.mjs';
import { inBothModes, type Mode, WEBKIT_DRIVER } from './browsers/both-modes';
import type { BrowserSession } from './browsers/driver';
import { firefoxSession } from './browsers/firefox-session';
import { independentWalk } from './browsers/independent-walk';
import { webkitSession } from './browsers/webkit-session';
import { DOT_BFF_SECRET, startDjangoOAuthToolkit, stopDjangoOAuthToolkit } from './django-oauth-toolkit';
import { requireTool, startServer, type StartedServer } from './support';

/**
 * Django OAuth Toolkit, an independent provider, in Firefox and WebKit, in both modes (Chromium walks it
 * in independent-provider.spec.ts, where Playwright can also read the vault's requests): the token vault
 * as DOT's public client, and the server as its confidential client.
 */
test.describe.configure({ timeout: 180_000 });
requireTool('django-oauth-toolkit');

const DOT = `http://localhost:${port(110)}`;
const ALICE = { username: 'alice', password: 'alice', name: 'Alice Liddell' };
/**
 * Short-lived access tokens, so the walk sees a renewal: the vault renews at half their life, and the walk
 * waits past the whole of it (10 s; at 20 s, four walks waited 40 s more and proved nothing more).
 */
const ACCESS_TOKEN_TTL = 10;
let provider: ChildProcess | undefined;
const servers: { browser?: StartedServer; bff?: StartedServer } = {};

test.beforeAll(async () => {
  test.setTimeout(120_000);
  provider = await startDjangoOAuthToolkit({
    port: port(110),
    appOrigin: `http://localhost:${port(112)}`,
    bffOrigin: `http://localhost:${port(114)}`,
    accessTokenTtl: ACCESS_TOKEN_TTL,
  });
  const common = { OIDC_AUTHORITY: `${DOT}/o`, TELEMETRY_CONSENT: 'implied' };
  [servers.browser, servers.bff] = await Promise.all([
    startServer(112, { ...common, OIDC_CLIENT_ID: 'gatehouse' }),
    startServer(114, {
      ...common,
      OIDC_MODE: 'bff',
      OIDC_CLIENT_ID: 'gatehouse-bff',
      OIDC_CLIENT_SECRET: DOT_BFF_SECRET,
    }),
  ]);
});
test.afterAll(async () => {
  await Promise.all([servers.browser?.stop(), servers.bff?.stop()]);
  await stopDjangoOAuthToolkit(provider);
});

const browsers: [string, (mode: Mode) => Promise<BrowserSession>][] = [
  [
    'Firefox',
    () => {
      requireTool('firefox');
      return firefoxSession(findFirefox().path ?? '');
    },
  ],
  [
    'WebKit',
    (mode) => {
      requireTool('webkit');
      const { driver = '', xvfb = '' } = findWebKit();
      return webkitSession({ driver, xvfb }, port(WEBKIT_DRIVER[mode]));
    },
  ],
];

// Both modes at once in each engine (browsers/both-modes.ts): the walks' waits overlap.
for (const [name, open] of browsers) {
  test(`Django OAuth Toolkit in ${name}, in both modes`, async () => {
    await inBothModes(async (mode) => {
      const server = servers[mode];
      if (!server) throw new Error(`no ${mode} server`);
      const session = await open(mode);
      try {
        await independentWalk(session, {
          app: server.origin,
          provider: DOT,
          account: ALICE,
          accessTokenTtl: ACCESS_TOKEN_TTL,
        });
      } finally {
        await session.close();
      }
    });
  });
}

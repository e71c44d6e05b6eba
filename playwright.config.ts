import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { defineConfig, devices } from '@playwright/test';
import { findChromium } from './scripts/test-tools.mjs';

/**
 * Ports of their own, so a running `npm start` on 3000/3001 does not collide with the tests. Every port
 * the suite uses is `E2E_PORT_BASE` (4100) plus an offset below 120, so two checkouts can run their
 * suites side by side with different bases.
 */
const PORT_BASE = Number(process.env.E2E_PORT_BASE ?? 4100);
export const port = (offset: number): number => PORT_BASE + offset;
export const APP = `http://localhost:${port(0)}`;
export const IDP = `http://localhost:${port(1)}`;
/** A second Gatehouse whose identity provider does not answer. */
export const APP_WITHOUT_PROVIDER = `http://localhost:${port(2)}`;

/**
 * The secret of the local provider's test controls for this run. Made once here in the runner, given to
 * the servers, and reaching the test workers through the environment they inherit from the runner.
 */
process.env.E2E_TEST_CONTROLS_SECRET ||= randomBytes(24).toString('base64url');
export const TEST_CONTROLS_SECRET = process.env.E2E_TEST_CONTROLS_SECRET;

/** CHROMIUM_PATH, else Debian's Chromium, else Playwright's own build (scripts/test-tools.mjs). */
const CHROMIUM = findChromium().path;

/** Each server gets a fresh telemetry store of its own (DuckDB allows one process per file). */
const dataDir = () => mkdtempSync(join(tmpdir(), 'gatehouse-e2e-'));

const server = (env: Record<string, string>) => ({
  command: 'node apps/server/dist/main.js',
  // One server per test origin: the only replica, so production's shared state (Redis) is not needed.
  env: { GATEHOUSE_DATA_DIR: dataDir(), GATEHOUSE_SINGLE_REPLICA: '1', ...env, NODE_ENV: 'production' },
  stdout: 'ignore' as const,
  stderr: 'pipe' as const,
  reuseExistingServer: false,
  timeout: 60_000,
});

/**
 * Two lanes of heavy specs, each one file at a time, beside the light ones (docs/decisions/0113, 0131):
 * Firefox and WebKit in a virtual display (the two specs share WebKitWebDriver's ports), and the specs
 * that build images, start a cluster or hold an outage; two of one kind at once would take more of the
 * machine than a light spec can spare. `dev-loop` runs alone, after every other spec: its `tsc --watch`
 * rewrites the collector's build, which the servers other specs start load.
 */
const REAL_BROWSERS = /[/\\](browsers|browsers-independent)\.spec\.ts$/;
const CLUSTERS = /[/\\](compose|container-image|kubernetes|relay|replicas|replicas-bff)\.spec\.ts$/;
const ALONE = /[/\\]dev-loop\.spec\.ts$/;
const chromium = { ...devices['Desktop Chrome'] };
/** Test files at a time on the two-core machine `npm test` is measured on: one per lane (0131). */
const WORKERS = 3;

export default defineConfig({
  testDir: 'e2e',
  globalSetup: './e2e/global-setup.ts',
  // Tests share the servers below; each test's settings of the provider's test controls are its own
  // (support.ts `misbehave`), and each spec that starts servers has ports of its own: files run side by
  // side, the tests of one file in order (they share what its beforeAll started).
  workers: Number(process.env.E2E_WORKERS ?? WORKERS),
  fullyParallel: false,
  forbidOnly: !!process.env.CI,
  // A spec that passes only on a retry is a failing spec: no retries, and a flaky result fails the run.
  retries: 0,
  failOnFlakyTests: true,
  timeout: 60_000,
  expect: { timeout: 10_000 },
  reporter: [['list']],
  use: {
    baseURL: APP,
    // No trace is recorded: recording one for every test costs the stage about 8 % of its time, and a
    // failure is looked at again with `npx playwright test <spec> --trace retain-on-failure` (0133).
    trace: 'off',
    launchOptions: {
      ...(CHROMIUM ? { executablePath: CHROMIUM } : {}),
      args: [
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  // The heavy lanes first: they are the longest chains, and a worker takes the first project's files first.
  projects: [
    { name: 'real browsers', testMatch: REAL_BROWSERS, workers: 1, use: chromium },
    { name: 'clusters', testMatch: CLUSTERS, workers: 1, use: chromium },
    { name: 'chromium', testIgnore: [REAL_BROWSERS, CLUSTERS, ALONE], use: chromium },
    {
      name: 'alone',
      testMatch: ALONE,
      dependencies: ['chromium', 'real browsers', 'clusters'],
      use: chromium,
    },
  ],
  webServer: [
    {
      ...server({
        PORT: String(port(0)),
        IDP_PORT: String(port(1)),
        // NODE_ENV=production needs the bundled provider allowed explicitly.
        ALLOW_BUNDLED_DEV_IDP: '1',
        DEV_IDP_TEST_CONTROLS: '1',
        DEV_IDP_TEST_CONTROLS_SECRET: TEST_CONTROLS_SECRET,
      }),
      url: `${IDP}/.well-known/openid-configuration`,
    },
    {
      ...server({
        PORT: String(port(2)),
        OIDC_AUTHORITY: `http://localhost:${port(9)}`,
        OIDC_CLIENT_ID: 'gatehouse',
        TELEMETRY_CONSENT: 'implied',
      }),
      url: `${APP_WITHOUT_PROVIDER}/`,
    },
  ],
});

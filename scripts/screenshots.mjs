#!/usr/bin/env node
// Regenerates the README's pictures: starts Gatehouse (already built) on spare ports, signs in as the
// admin demo account in headless Chromium, and saves PNGs under docs/images.
import { spawn } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from '@playwright/test';

// Ports: SCREENSHOTS_PORT (default 4400) and the next one, so a run beside a test suite can move aside.
const PORT = Number(process.env.SCREENSHOTS_PORT ?? 4400);
const APP = `http://localhost:${PORT}`;
const server = spawn(process.execPath, ['apps/server/dist/main.js'], {
  env: {
    ...process.env,
    PORT: String(PORT),
    IDP_PORT: String(PORT + 1),
    TELEMETRY_CONSENT: 'implied',
    GATEHOUSE_DATA_DIR: mkdtempSync(join(tmpdir(), 'gatehouse-screenshots-')),
  },
  stdio: ['ignore', 'pipe', 'inherit'],
});
await new Promise((resolve) =>
  server.stdout.on('data', (d) => String(d).includes('Gatehouse is running') && resolve()),
);
const browser = await chromium.launch({
  executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
  args: ['--no-sandbox', '--disable-gpu', '--disable-background-networking'],
});
try {
  const page = await browser.newPage({ viewport: { width: 1100, height: 620 }, colorScheme: 'light' });
  await page.goto(APP);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).waitFor();
  await page.screenshot({ path: 'docs/images/home.png' });
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Username').waitFor();
  await page.screenshot({ path: 'docs/images/sign-in.png' });
  await page.getByLabel('Username').fill('admin');
  await page.getByLabel('Password').fill('admin');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('display-name').waitFor();
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await page.getByTestId('api-me').waitFor();
  await page.screenshot({ path: 'docs/images/profile.png', fullPage: true });
  // Some activity for the dashboard, then the dashboard itself.
  await page.getByRole('navigation').getByRole('link', { name: 'Diagnostics' }).click();
  await page.getByRole('button', { name: 'Throw an uncaught error' }).click();
  await page.getByRole('button', { name: 'Call the API' }).click();
  await page.getByRole('status').waitFor();
  await page.goto(`${APP}/usage`);
  await page.waitForTimeout(1_500);
  await page.reload();
  await page.getByTestId('tile-users').waitFor();
  // A mark on the charts (ADR 0085).
  const annotations = page.getByRole('form', { name: 'New annotation' });
  await annotations.getByLabel('Note').fill('Release 1.4');
  await annotations.getByRole('button', { name: 'Add annotation' }).click();
  await page.getByRole('button', { name: 'Delete the annotation “Release 1.4”' }).waitFor();
  // The dashboard's first screen, on a laptop and on a phone (ADR 0081), the page views chosen.
  await page.getByTestId('tile-pageViews').getByRole('button').click();
  await page.setViewportSize({ width: 1280, height: 800 });
  await page.getByTestId('big-chart').waitFor();
  await page.screenshot({ path: 'docs/images/usage.png' });
  // Where visitors come from (ADR 0073).
  await page.locator('#sources').screenshot({ path: 'docs/images/usage-sources.png' });
  await page.setViewportSize({ width: 360, height: 800 });
  await page.getByTestId('big-chart').waitFor();
  await page.screenshot({ path: 'docs/images/usage-phone.png' });
  console.log(
    'Saved docs/images/home.png, sign-in.png, profile.png, usage.png, usage-sources.png, usage-phone.png',
  );
} finally {
  await browser.close();
  server.kill('SIGTERM');
}

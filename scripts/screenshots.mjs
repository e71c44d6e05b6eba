#!/usr/bin/env node
// Regenerates the README's pictures: starts Gatehouse (already built) on spare ports, signs in as the
// admin demo account in headless Chromium, and saves PNGs under docs/images.
import { spawn } from 'node:child_process';
import { chromium } from '@playwright/test';

const APP = 'http://localhost:4400';
const server = spawn(process.execPath, ['apps/server/dist/main.js'], {
  env: { ...process.env, PORT: '4400', IDP_PORT: '4401' },
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
  console.log('Saved docs/images/home.png, sign-in.png, profile.png');
} finally {
  await browser.close();
  server.kill('SIGTERM');
}

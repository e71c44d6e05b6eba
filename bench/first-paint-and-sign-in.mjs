// The public home page's cost, against a bare React 19 + Vite page built in this same run:
// gzipped JavaScript loaded before the first contentful paint, and the first paint itself; then the
// time from clicking "Sign in" to the signed-in page, through the real local OpenID provider.
// Needs `npm run build` first (npm run bench does it). Knobs: BENCH_LOADS (7), BENCH_SIGN_INS (7).
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import http from 'node:http';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gzipSync } from 'node:zlib';
import { chromium } from '@playwright/test';
import react from '@vitejs/plugin-react';
import { build } from 'vite';

const root = fileURLToPath(new URL('..', import.meta.url));
const out = path.join(root, 'bench', '.out');
const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const SIGN_INS = Number(process.env.BENCH_SIGN_INS ?? 7);
const APP_PORT = 4300;
const IDP_PORT = 4301;

/** The baseline: the smallest React 19 page Vite builds, with the same plugin and target. */
async function buildBarePage() {
  const dir = path.join(out, 'bare-react');
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    path.join(dir, 'index.html'),
    '<!doctype html><html lang="en"><head><meta charset="UTF-8"><title>Bare</title></head>' +
      '<body><div id="root"></div><script type="module" src="/main.jsx"></script></body></html>',
  );
  writeFileSync(
    path.join(dir, 'main.jsx'),
    "import { StrictMode } from 'react';\nimport { createRoot } from 'react-dom/client';\n" +
      "createRoot(document.getElementById('root')).render(<StrictMode><h1>Hello, world</h1></StrictMode>);\n",
  );
  await build({
    root: dir,
    logLevel: 'silent',
    plugins: [react()],
    build: { outDir: path.join(dir, 'dist') },
  });
  return path.join(dir, 'dist');
}

function serveStatic(dir) {
  const types = { '.html': 'text/html', '.js': 'text/javascript', '.css': 'text/css' };
  const server = http.createServer((req, res) => {
    const file = path.join(dir, req.url === '/' ? 'index.html' : path.normalize(req.url.split('?')[0]));
    try {
      const body = readFileSync(file);
      res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
      res.end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((resolve) => server.listen(0, '127.0.0.1', () => resolve(server)));
}

export async function startGatehouse(env = {}, port = APP_PORT, idpPort = IDP_PORT) {
  const child = spawn(process.execPath, ['apps/server/dist/main.js'], {
    cwd: root,
    env: {
      ...process.env,
      PORT: String(port),
      IDP_PORT: String(idpPort),
      GATEHOUSE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-')),
      NODE_ENV: 'production',
      // The bundled provider, in production mode: allowed explicitly (docs/decisions/0016).
      ALLOW_BUNDLED_DEV_IDP: '1',
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('Gatehouse did not start within 30 s')), 30_000);
    child.stdout.on('data', (chunk) => {
      if (String(chunk).includes('Gatehouse is running')) {
        clearTimeout(timer);
        resolve();
      }
    });
    child.once('exit', (code) => reject(new Error(`Gatehouse exited with ${code}`)));
  });
  return child;
}

/**
 * Scripts whose response ended before the first contentful paint, with their gzipped sizes, and the
 * largest contentful paint.
 */
export async function measureFirstPaint(browser, url, contextOptions = {}) {
  const context = await browser.newContext(contextOptions);
  const page = await context.newPage();
  await page.goto(url, { waitUntil: 'load' });
  await page.waitForFunction(() => performance.getEntriesByName('first-contentful-paint').length > 0);
  const lcp = await page.evaluate(
    () =>
      new Promise((resolve) => {
        new PerformanceObserver((list) => resolve(list.getEntries().at(-1).startTime)).observe({
          type: 'largest-contentful-paint',
          buffered: true,
        });
      }),
  );
  const { fcp, scripts } = await page.evaluate(() => {
    const paint = performance.getEntriesByName('first-contentful-paint')[0].startTime;
    const loaded = performance
      .getEntriesByType('resource')
      .filter((entry) => entry.name.endsWith('.js') && entry.responseEnd <= paint)
      .map((entry) => entry.name);
    return { fcp: paint, scripts: loaded };
  });
  let gzipped = 0;
  for (const script of scripts) {
    const body = Buffer.from(await (await context.request.get(script)).body());
    gzipped += gzipSync(body, { level: 9 }).length;
  }
  await context.close();
  return { fcp, lcp, gzipped, scripts: scripts.map((s) => new URL(s).pathname) };
}

async function measureSignIn(browser, origin) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(origin, { waitUntil: 'load' });
  const button = page.getByRole('banner').getByRole('button', { name: 'Sign in' });
  await button.waitFor();
  const started = performance.now();
  await button.click();
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('display-name').waitFor();
  const elapsed = performance.now() - started;
  await context.close();
  return elapsed;
}

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;

export async function run() {
  const bareDir = await buildBarePage();
  const bare = await serveStatic(bareDir);
  const gatehouse = await startGatehouse();
  const browser = await launchChromium();
  try {
    const bareUrl = `http://127.0.0.1:${bare.address().port}/`;
    const appUrl = `http://localhost:${APP_PORT}/`;
    // One unmeasured load each: the servers' and the browser's cold start are not what is compared.
    await measureFirstPaint(browser, bareUrl);
    await measureFirstPaint(browser, appUrl);
    const bareRuns = [];
    const appRuns = [];
    for (let i = 0; i < LOADS; i++) {
      bareRuns.push(await measureFirstPaint(browser, bareUrl));
      appRuns.push(await measureFirstPaint(browser, appUrl));
    }
    const signIns = [];
    for (let i = 0; i < SIGN_INS; i++) signIns.push(await measureSignIn(browser, appUrl));

    const bareJs = median(bareRuns.map((r) => r.gzipped));
    const appJs = median(appRuns.map((r) => r.gzipped));
    const bareFcp = median(bareRuns.map((r) => r.fcp));
    const appFcp = median(appRuns.map((r) => r.fcp));
    const results = {
      firstPaint: {
        bareReactJsGzipBytes: bareJs,
        homeJsGzipBytes: appJs,
        jsRatio: appJs / bareJs,
        goalRatio: 1.5,
        bareFcpMs: bareFcp,
        homeFcpMs: appFcp,
        fcpRatio: appFcp / bareFcp,
        homeScriptsBeforePaint: appRuns.at(-1).scripts,
      },
      signIn: {
        runs: SIGN_INS,
        medianMs: median(signIns),
        minMs: Math.min(...signIns),
        maxMs: Math.max(...signIns),
      },
    };
    console.log('\nPublic home page vs a bare React 19 + Vite page (same run, medians of %d loads)', LOADS);
    console.log(
      '  gzipped JS before first paint: home %s, bare %s, ratio %s (goal <= 1.5)',
      kb(appJs),
      kb(bareJs),
      (appJs / bareJs).toFixed(2),
    );
    console.log(
      '  first contentful paint:        home %s ms, bare %s ms, ratio %s',
      appFcp.toFixed(0),
      bareFcp.toFixed(0),
      (appFcp / bareFcp).toFixed(2),
    );
    console.log('  scripts before paint (home):   %s', results.firstPaint.homeScriptsBeforePaint.join(', '));
    console.log(
      '\nSign-in, from clicking "Sign in" to the signed-in page (local provider, %d runs)',
      SIGN_INS,
    );
    console.log(
      '  median %s ms (min %s, max %s)',
      results.signIn.medianMs.toFixed(0),
      results.signIn.minMs.toFixed(0),
      results.signIn.maxMs.toFixed(0),
    );
    return results;
  } finally {
    await browser.close();
    gatehouse.kill('SIGTERM');
    bare.close();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await run();
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'first-paint-and-sign-in.json'), JSON.stringify(results, null, 2));
}

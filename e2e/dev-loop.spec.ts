import { spawn, type ChildProcess } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, test } from '@playwright/test';
import { port } from '../playwright.config';

/**
 * `npm run dev` (ADR 0055): the SPA through Vite on the app server's origin, under the production CSP
 * plus a nonce; an edit to a page shows in the open tab without a reload (hot module replacement).
 * The test edits the real page file and puts it back, whatever happens.
 */
const ORIGIN = `http://localhost:${port(44)}`;
const PAGE_FILE = 'apps/web/src/features/home/home-page.tsx';
const original = readFileSync(PAGE_FILE, 'utf8');
/** A page the second test adds, as the README's recipe says, and takes away. */
const NEW_FEATURE = 'apps/web/src/features/dev-loop-probe';
const DATA_DIR = mkdtempSync(join(tmpdir(), 'gatehouse-e2e-dev-'));
let dev: ChildProcess;

test.beforeAll(async () => {
  test.setTimeout(480_000);
  dev = spawn(
    process.execPath,
    ['node_modules/tsx/dist/cli.mjs', '--conditions=@gatehouse/source', 'apps/server/src/dev.ts'],
    {
      env: {
        ...process.env,
        PORT: String(port(44)),
        IDP_PORT: String(port(45)),
        GATEHOUSE_DATA_DIR: DATA_DIR,
        NODE_ENV: '',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  // Ready when the page answers (the collector's first build and Vite's start come first).
  await expect
    .poll(
      () =>
        fetch(`${ORIGIN}/`).then(
          (response) => response.status,
          () => 0,
        ),
      { timeout: 470_000, intervals: [500] },
    )
    .toBe(200);
});

test.afterAll(async () => {
  writeFileSync(PAGE_FILE, original);
  rmSync(NEW_FEATURE, { recursive: true, force: true });
  if (dev.exitCode === null) {
    const exited = new Promise((resolve) => dev.once('exit', resolve));
    dev.kill('SIGTERM');
    await exited;
  }
});

test('an edit to a page shows in the open tab without a reload, under the CSP', async ({ page }) => {
  const refused: string[] = [];
  page.on('console', (message) => {
    if (/Content Security Policy/i.test(message.text())) refused.push(message.text());
  });
  await page.goto(ORIGIN);
  const heading = page.getByRole('heading', { level: 1 });
  await expect(heading).toHaveText('Welcome to Gatehouse');
  await expect(page.getByRole('banner').getByRole('button', { name: 'Sign in' })).toBeVisible();
  // Something only this document holds: a reload or a navigation would lose it.
  await page.evaluate(() => ((window as unknown as { beforeEdit: boolean }).beforeEdit = true));
  const hmrUpdate = page.waitForEvent('console', (message) => message.text().includes('[vite] hot updated'));

  try {
    writeFileSync(PAGE_FILE, original.replace('<h1>Welcome to Gatehouse</h1>', '<h1>Welcome, edited</h1>'));
    await hmrUpdate;
    await expect(heading).toHaveText('Welcome, edited');
  } finally {
    writeFileSync(PAGE_FILE, original);
  }
  await expect(heading).toHaveText('Welcome to Gatehouse');
  expect(await page.evaluate(() => (window as unknown as { beforeEdit?: boolean }).beforeEdit)).toBe(true);
  expect(await page.evaluate(() => performance.getEntriesByType('navigation').length)).toBe(1);
  expect(refused).toEqual([]);
});

test('a page file added under features/ is in the route table and the navigation at once', async ({
  page,
}) => {
  await page.goto(ORIGIN);
  const nav = page.getByRole('navigation', { name: 'Main' });
  await expect(nav.getByRole('link', { name: 'Home' })).toBeVisible();
  await expect(nav.getByRole('link', { name: 'Probe' })).toHaveCount(0);
  try {
    mkdirSync(NEW_FEATURE, { recursive: true });
    writeFileSync(
      `${NEW_FEATURE}/dev-loop-probe-page.tsx`,
      [
        "import type { PageRoute } from '../../shared/page-route';",
        '',
        "export const route = { path: '/probe', name: 'Probe', access: 'public', nav: { label: 'Probe', order: 15 } } satisfies PageRoute;",
        '',
        'export default function ProbePage() {',
        '  return <h1>A page of its own</h1>;',
        '}',
        '',
      ].join('\n'),
    );
    // A new row in the table reloads the page; its link sits where its order puts it.
    await expect(nav.getByRole('link')).toHaveText(['Home', 'Probe', 'Profile'], { timeout: 30_000 });
    await nav.getByRole('link', { name: 'Probe' }).click();
    await expect(page).toHaveURL(`${ORIGIN}/probe`);
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('A page of its own');
  } finally {
    rmSync(NEW_FEATURE, { recursive: true, force: true });
  }
  await expect(nav.getByRole('link', { name: 'Probe' })).toHaveCount(0, { timeout: 30_000 });
});

test('Vite does not serve the data folder: its user id key is refused through /@fs/', async () => {
  // Made at the server's start, before it listens: a file that is there, so Vite refuses it (403).
  expect((await fetch(`${ORIGIN}/@fs${join(DATA_DIR, 'telemetry-user-id.key')}`)).status).toBe(403);
});

test('stopping it stops every process it started, the compiler watching the collector included', async () => {
  test.skip(!existsSync('/proc/self/stat'), 'the process tree is read from /proc (Linux)');
  // TypeScript 7's `bin/tsc` starts its executable as a child on Node before 22.15: stopping the script
  // alone left the watcher running after `npm run dev` had stopped.
  const started = descendants(dev.pid ?? 0);
  expect(started.length).toBeGreaterThan(1);
  const exited = new Promise((resolve) => dev.once('exit', resolve));
  dev.kill('SIGTERM');
  await exited;
  await expect
    .poll(() => started.filter((pid) => existsSync(`/proc/${pid}/stat`)), { timeout: 15_000 })
    .toEqual([]);
});

/** The pids of every process under `root` (Linux: each process's parent is in its /proc stat). */
function descendants(root: number): number[] {
  const parents = new Map<number, number>();
  for (const name of readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      parents.set(Number(name), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]));
    } catch {
      // Gone meanwhile.
    }
  }
  const found: number[] = [];
  const visit = (pid: number) => {
    for (const [child, parent] of parents)
      if (parent === pid) {
        found.push(child);
        visit(child);
      }
  };
  visit(root);
  return found;
}

// Gatehouse beside its peers, measured in one run, alternating, in headless Chromium, all against one
// local OpenID provider (Gatehouse's bundled one) and all served through one front origin:
// - a bare React 19 page (the baseline for first paint and its JavaScript),
// - a bare oidc-client-ts UserManager page with no framework (the baseline for sign-in),
// - the usual eager stack: React Router 7 + react-oidc-context + Application Insights with its React plugin,
// - Gatehouse's home page (telemetry consent implied, as the eager stack has it on).
// Per page: first contentful paint, gzipped JS loaded before it, click "Sign in" -> signed-in UI with the
// time on the provider's own login page subtracted, requests to the provider, and a reload of the
// signed-in page (time to the signed-in UI, and whether the signed-out UI ever appeared).
// Peers' sources are in bench/peers/ (root devDependencies, never in the app's bundles).
// Needs `npm run build` first (npm run bench does it). Knobs: BENCH_RUNS (7; 1 is the short mode),
// BENCH_PORT_BASE (4300: front +0, provider +1, Gatehouse +2, the baseline +3 and its provider +4, the
// BFF's Gatehouse +5 and its provider +6, the provider on another site +7 and its Gatehouse +8),
// BENCH_BASELINE_REF (a git ref: Gatehouse as built at that commit is measured too, alternating with
// today's, so a change's cost to first paint and sign-in is read in one run).
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
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
const RUNS = Number(process.env.BENCH_RUNS ?? process.env.BENCH_LOADS ?? 7);
const PORT_BASE = Number(process.env.BENCH_PORT_BASE ?? 4300);
const FRONT_PORT = PORT_BASE;
const IDP_PORT = PORT_BASE + 1;
const APP_PORT = PORT_BASE + 2;
const BASELINE_PORT = PORT_BASE + 3;
const BASELINE_IDP_PORT = PORT_BASE + 4;
const BFF_PORT = PORT_BASE + 5;
const BFF_IDP_PORT = PORT_BASE + 6;
const OTHER_SITE_IDP_PORT = PORT_BASE + 7;
const OTHER_SITE_APP_PORT = PORT_BASE + 8;
const BASELINE_REF = process.env.BENCH_BASELINE_REF;
const FRONT = `http://localhost:${FRONT_PORT}`;
const IDP = `http://localhost:${IDP_PORT}`;
/**
 * The provider on another site than the app: `localhost` and `127.0.0.1` are two sites to the browser, so
 * leaving for it and coming back each start a renderer process for every page, the peers' included.
 */
const OTHER_SITE_IDP = `http://127.0.0.1:${OTHER_SITE_IDP_PORT}`;
/** Gatehouse's default scope, asked by every page, so each does the same protocol work. */
const SCOPE = 'openid profile email offline_access';
const USER = 'alice';

const PEERS = ['bare-react', 'bare-oidc', 'eager-stack'];
const LABELS = {
  'bare-react': 'bare React 19',
  'bare-oidc': 'bare oidc-client-ts',
  'eager-stack': 'eager stack (RR7 + react-oidc-context + AI)',
  gatehouse: 'Gatehouse home',
  'gatehouse-unisolated': 'Gatehouse home without its COOP header',
  'gatehouse-baseline': `Gatehouse home at ${BASELINE_REF}`,
  'gatehouse-bff': 'Gatehouse home, BFF mode (OIDC_MODE=bff)',
  'bare-oidc-other-site': 'bare oidc-client-ts, provider on another site',
  'gatehouse-other-site': 'Gatehouse home, provider on another site',
};
const SIGNS_IN = [
  'bare-oidc',
  'eager-stack',
  'gatehouse',
  'gatehouse-unisolated',
  'gatehouse-bff',
  'bare-oidc-other-site',
  'gatehouse-other-site',
];
/** Pages whose signed-in app is Gatehouse's, where one API call (the Profile page's) is timed. */
const CALLS_API = new Set(['gatehouse', 'gatehouse-unisolated', 'gatehouse-bff', 'gatehouse-baseline']);
/**
 * Gatehouse's header that puts its pages in a browsing context group of their own (COOP). Chromium may
 * then commit the page in a new renderer process: a cost no peer here pays, so Gatehouse is also measured
 * without it, to tell that cost from the app's own (docs/performance/first-paint.md, ADR 0038).
 */
const ISOLATION_HEADERS = ['cross-origin-opener-policy'];
const GATEHOUSE_PAGES = new Set(['gatehouse', 'gatehouse-unisolated']);

/** Builds one peer from bench/peers/<name> into bench/.out/peers/<outName>, signing in at `authority`. */
async function buildPeer(name, authority = IDP, outName = name) {
  const outDir = path.join(out, 'peers', outName);
  rmSync(outDir, { recursive: true, force: true });
  await build({
    root: path.join(root, 'bench', 'peers', name),
    logLevel: 'silent',
    plugins: [react()],
    define: { __AUTHORITY__: JSON.stringify(authority), __SCOPE__: JSON.stringify(SCOPE) },
    build: { outDir, emptyOutDir: true },
  });
  return outDir;
}

/**
 * A single-page app's static server: files as they are, every other path the page (so /callback works),
 * and an Application Insights ingestion endpoint that accepts everything (for the eager stack).
 */
function serveStatic(dir) {
  const types = {
    '.html': 'text/html',
    '.js': 'text/javascript',
    '.css': 'text/css',
    '.svg': 'image/svg+xml',
  };
  const server = http.createServer((req, res) => {
    const pathname = new URL(req.url, 'http://x').pathname;
    if (req.method === 'POST') {
      req.resume();
      req.on('end', () =>
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end('{"itemsReceived":0,"itemsAccepted":0,"errors":[]}'),
      );
      return;
    }
    let file = path.join(dir, path.normalize(pathname));
    if (!file.startsWith(dir) || !statSync(file, { throwIfNoEntry: false })?.isFile()) {
      file = path.join(dir, 'index.html');
    }
    res.writeHead(200, { 'content-type': types[path.extname(file)] ?? 'application/octet-stream' });
    res.end(readFileSync(file));
  });
  return listen(server, 0);
}

function listen(server, port) {
  return new Promise((resolve) => server.listen(port, '127.0.0.1', () => resolve(server)));
}

/**
 * The one origin the provider knows (its client's redirect URI and CORS origin): a plain proxy to the
 * page being measured, so every page, Gatehouse included, pays the same extra hop. `route(port, strip)`
 * sends the next requests to `port`, without the response headers named in `strip`.
 */
function startFront() {
  const agent = new http.Agent({ keepAlive: true });
  let upstream = 0;
  let stripped = new Set();
  const server = http.createServer((req, res) => {
    const forward = http.request(
      { host: '127.0.0.1', port: upstream, method: req.method, path: req.url, headers: req.headers, agent },
      (answer) => {
        const headers = Object.fromEntries(
          Object.entries(answer.headers).filter(([name]) => !stripped.has(name)),
        );
        res.writeHead(answer.statusCode, headers);
        answer.pipe(res);
      },
    );
    forward.on('error', () => res.writeHead(502).end());
    req.pipe(forward);
  });
  return listen(server, FRONT_PORT).then(() => ({
    server,
    route: (port, strip = []) => {
      upstream = port;
      stripped = new Set(strip);
    },
  }));
}

/**
 * Gatehouse as built at `ref`: a worktree of that commit in a temporary directory, with this checkout's
 * installed packages copied in as hard links (their workspace links then point into the worktree), built
 * with the project's own build. Returns the worktree's path and a function that removes it.
 */
function buildBaseline(ref) {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-baseline-'));
  const git = (...args) => execFileSync('git', args, { cwd: root, stdio: 'pipe' });
  git('worktree', 'add', '--detach', dir, ref);
  // The root's packages and each workspace's own (npm nests a version apart where two disagree).
  const workspaces = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).workspaces;
  for (const modules of ['node_modules', ...workspaces.map((w) => `${w}/node_modules`)]) {
    if (existsSync(path.join(root, modules))) {
      execFileSync('cp', ['-al', path.join(root, modules), path.join(dir, modules)]);
    }
  }
  execFileSync('npm', ['run', 'build'], { cwd: dir, stdio: 'ignore' });
  return { dir, remove: () => git('worktree', 'remove', '--force', dir) };
}

/** Every server a bench started: stopped when the bench's process ends, however it ends. */
const startedServers = new Set();
process.once('exit', () => {
  for (const child of startedServers) child.kill('SIGTERM');
});

export function startGatehouse(env = {}, port = APP_PORT, idpPort = IDP_PORT, cwd = root) {
  return startProcess(
    'Gatehouse',
    ['apps/server/dist/main.js'],
    {
      PORT: String(port),
      IDP_PORT: String(idpPort),
      GATEHOUSE_DATA_DIR: mkdtempSync(path.join(tmpdir(), 'gatehouse-bench-')),
      NODE_ENV: 'production',
      // The bundled provider, in production mode: allowed explicitly (docs/decisions/0016).
      ALLOW_BUNDLED_DEV_IDP: '1',
      // One process: the only replica (production asks for Redis or this).
      GATEHOUSE_SINGLE_REPLICA: '1',
      ...env,
    },
    'Gatehouse is running',
    cwd,
  );
}

/**
 * Gatehouse's local provider in a process of its own, at `OTHER_SITE_IDP` (another site than the app's
 * origin), for the app at `FRONT`; the Gatehouse that signs in there is started with OIDC_AUTHORITY.
 */
function startOtherSiteProvider() {
  const options = {
    port: OTHER_SITE_IDP_PORT,
    host: '127.0.0.1',
    issuer: OTHER_SITE_IDP,
    appOrigin: FRONT,
  };
  const script = `import { startDevIdp } from '@gatehouse/dev-idp';
await startDevIdp(${JSON.stringify(options)});
console.log('provider ready');`;
  return startProcess(
    'the provider on another site',
    ['--input-type=module', '-e', script],
    {},
    'provider ready',
  );
}

/** A Node process of this bench, once it has printed `ready`; stopped when the bench ends. */
async function startProcess(name, args, env, ready, cwd = root) {
  const child = spawn(process.execPath, args, {
    cwd,
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  startedServers.add(child);
  child.once('exit', () => startedServers.delete(child));
  await new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${name} did not start within 30 s`)), 30_000);
    child.stdout.on('data', (chunk) => {
      if (String(chunk).includes(ready)) {
        clearTimeout(timer);
        resolve();
      }
    });
    let errors = '';
    child.stderr.on('data', (chunk) => (errors = `${errors}${chunk}`.slice(-2_000)));
    child.once('exit', (code) => reject(new Error(`${name} exited with ${code}: ${errors}`)));
  });
  return child;
}

/**
 * Scripts whose response ended before the first contentful paint, with their gzipped sizes, the largest
 * contentful paint, and where the time before the paint went (HTML, first script, DOMContentLoaded).
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
  const { fcp, scripts, html, firstScript, domContentLoaded } = await page.evaluate(() => {
    const paint = performance.getEntriesByName('first-contentful-paint')[0].startTime;
    const [navigation] = performance.getEntriesByType('navigation');
    const resources = performance.getEntriesByType('resource').filter((entry) => entry.name.endsWith('.js'));
    return {
      fcp: paint,
      scripts: resources.filter((entry) => entry.responseEnd <= paint).map((entry) => entry.name),
      html: navigation.responseEnd,
      firstScript: resources[0]?.responseEnd ?? 0,
      domContentLoaded: navigation.domContentLoadedEventEnd,
    };
  });
  let gzipped = 0;
  for (const script of scripts) {
    const body = Buffer.from(await (await context.request.get(script)).body());
    gzipped += gzipSync(body, { level: 9 }).length;
  }
  await context.close();
  return {
    fcp,
    lcp,
    gzipped,
    html,
    firstScript,
    domContentLoaded,
    scripts: scripts.map((s) => new URL(s).pathname),
  };
}

/**
 * Click "Sign in" -> signed-in UI, less the time on the provider's login page (from its form being
 * shown to its submission); the provider's requests the page itself makes (not the login form's);
 * then a reload of the signed-in page, watched from its first byte for a "Sign in" control.
 */
export async function measureSignIn(browser, front = FRONT, idp = IDP, { api = false } = {}) {
  const context = await browser.newContext();
  const page = await context.newPage();
  // From the signed-out page's load (a page may fetch discovery before the click) to the signed-in UI.
  const requests = [];
  let recording = true;
  let onProviderPage = false;
  context.on('request', (request) => {
    if (new URL(request.url()).origin !== idp || onProviderPage || !recording) return;
    const kind = request.resourceType() === 'document' ? 'navigation' : 'call';
    requests.push({ kind, what: `${request.method()} ${new URL(request.url()).pathname}` });
  });
  // When each page painted what the user waits for (the provider's form, then the signed-in UI), read in
  // the page itself, not when Playwright next looks: its look waits for the page's main thread, which may
  // be busy with work begun after the paint (an SDK loaded once the UI is shown), and would count that
  // work as the wait.
  await context.addInitScript(() => {
    // When the page's own click handler could first run (the input delay), kept across the provider's pages.
    document.addEventListener(
      'click',
      () => {
        if (!sessionStorage.getItem('bench.clickEvent')) {
          sessionStorage.setItem('bench.clickEvent', String(performance.timeOrigin + performance.now()));
        }
      },
      true,
    );
    const painted = {};
    window.__painted = painted;
    const watch = { form: 'input[type="password"]', signedIn: '[data-testid="display-name"]' };
    const observer = new MutationObserver(() => {
      for (const [what, selector] of Object.entries(watch)) {
        if (what in painted || !document.querySelector(selector)) continue;
        painted[what] = null;
        // The frame that shows it: the task after the next animation frame.
        requestAnimationFrame(() =>
          setTimeout(() => (painted[what] = performance.timeOrigin + performance.now()), 0),
        );
      }
    });
    observer.observe(document, { childList: true, subtree: true });
  });
  const paintedAt = (what) =>
    page
      .waitForFunction((key) => window.__painted?.[key] ?? false, what)
      .then((handle) => handle.jsonValue());
  const now = () => performance.timeOrigin + performance.now();
  await page.goto(front, { waitUntil: 'load' });
  const button = page.getByRole('banner').getByRole('button', { name: 'Sign in' });
  await button.waitFor();
  // A person's click: the mouse pressed and released on the button as soon as it is there. Playwright's
  // click() first waits for two animation frames of an unmoved box and checks the hit target, time no
  // person waits, which grew with how busy a page's frames were (it added 30-60 ms to every page here).
  const box = await button.boundingBox();
  const clicked = now();
  await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
  const username = page.getByLabel('Username');
  await username.waitFor();
  const formShown = await paintedAt('form');
  onProviderPage = true;
  await username.fill(USER);
  await page.getByLabel('Password').fill(USER);
  const submit = page.getByRole('button', { name: 'Sign in' });
  onProviderPage = false;
  const submitted = now();
  await submit.click();
  await page.getByTestId('display-name').waitFor();
  const signedIn = await paintedAt('signedIn');
  // Where the way back went: to the callback's document, its HTML, its parsing, then the page's own work.
  const back = await page.evaluate(() => {
    const [navigation] = performance.getEntriesByType('navigation');
    return {
      origin: performance.timeOrigin,
      html: navigation.responseEnd,
      parsed: navigation.domInteractive,
      clickEvent: Number(sessionStorage.getItem('bench.clickEvent')),
    };
  });
  recording = false;

  await page.addInitScript(() => {
    // Records, from the first byte of the reloaded page, whether any "Sign in" control was ever shown,
    // and when the signed-in UI first was.
    const seen = { signedOut: false, signedInAt: null };
    window.__reload = seen;
    new MutationObserver(() => {
      const buttons = [...document.querySelectorAll('button, a')];
      if (buttons.some((element) => element.textContent.trim() === 'Sign in')) seen.signedOut = true;
      if (seen.signedInAt === null && document.querySelector('[data-testid="display-name"]')) {
        seen.signedInAt = performance.now();
      }
    }).observe(document, { childList: true, subtree: true, characterData: true });
  });
  await page.reload({ waitUntil: 'load' });
  await page.getByTestId('display-name').waitFor();
  const reload = await page.evaluate(() => window.__reload);
  // One API call through the app (the vault's, or the BFF's cookie): the Profile page's GET /api/me,
  // from the click on its link to the answer shown (the page's code is fetched before, once).
  let apiMs;
  if (api) {
    const profile = page.getByRole('navigation').getByRole('link', { name: 'Profile' });
    await profile.waitFor();
    // Both ends read in the page (the click event, the frame that shows the answer), as the sign-in's
    // are: Playwright's own look at the answer polls at growing intervals, and added up to 800 ms.
    await page.evaluate(() => {
      const seen = (window.__apiCall = {});
      document.addEventListener('click', () => (seen.clicked ??= performance.now()), true);
      const observer = new MutationObserver(() => {
        if (!document.querySelector('[data-testid="api-me"]')?.textContent.includes('"sub"')) return;
        observer.disconnect();
        requestAnimationFrame(() => setTimeout(() => (seen.shown = performance.now()), 0));
      });
      observer.observe(document, { childList: true, subtree: true, characterData: true });
    });
    const box = await profile.boundingBox();
    await page.mouse.click(box.x + box.width / 2, box.y + box.height / 2);
    const call = await page
      .waitForFunction(() => (window.__apiCall.shown === undefined ? false : window.__apiCall))
      .then((handle) => handle.jsonValue());
    apiMs = call.shown - call.clicked;
  }
  await context.close();
  return {
    ms: formShown - clicked + (signedIn - submitted),
    toProviderMs: formShown - clicked,
    backMs: signedIn - submitted,
    inputDelayMs: back.clickEvent - clicked,
    toCallbackMs: back.origin - submitted,
    callbackHtmlMs: back.html,
    callbackParsedMs: back.parsed - back.html,
    afterParseMs: signedIn - (back.origin + back.parsed),
    calls: requests.filter((r) => r.kind === 'call').map((r) => r.what),
    navigations: requests.filter((r) => r.kind === 'navigation').map((r) => r.what),
    reloadSignedInMs: reload.signedInAt,
    reloadShowedSignedOut: reload.signedOut,
    apiMs,
  };
}

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH || '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
}

export const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
export const kb = (bytes) => `${(bytes / 1024).toFixed(1)} KB`;
const ms = (value) => `${value.toFixed(0)} ms`;
const ratio = (value, base) => (value / base).toFixed(2);

export async function run() {
  const servers = {};
  for (const name of PEERS) servers[name] = await serveStatic(await buildPeer(name));
  servers['bare-oidc-other-site'] = await serveStatic(
    await buildPeer('bare-oidc', OTHER_SITE_IDP, 'bare-oidc-other-site'),
  );
  const gatehouse = await startGatehouse(
    { PUBLIC_ORIGIN: FRONT, TELEMETRY_CONSENT: 'implied' },
    APP_PORT,
    IDP_PORT,
  );
  const bffServer = await startGatehouse(
    { PUBLIC_ORIGIN: FRONT, TELEMETRY_CONSENT: 'implied', OIDC_MODE: 'bff' },
    BFF_PORT,
    BFF_IDP_PORT,
  );
  const otherSiteProvider = await startOtherSiteProvider();
  const otherSiteServer = await startGatehouse(
    {
      PUBLIC_ORIGIN: FRONT,
      TELEMETRY_CONSENT: 'implied',
      OIDC_AUTHORITY: OTHER_SITE_IDP,
      OIDC_CLIENT_ID: 'gatehouse',
      OIDC_AUDIENCE: `${FRONT}/api`,
    },
    OTHER_SITE_APP_PORT,
    OTHER_SITE_IDP_PORT,
  );
  const baseline = BASELINE_REF ? buildBaseline(BASELINE_REF) : undefined;
  const baselineServer =
    baseline &&
    (await startGatehouse(
      { PUBLIC_ORIGIN: FRONT, TELEMETRY_CONSENT: 'implied' },
      BASELINE_PORT,
      BASELINE_IDP_PORT,
      baseline.dir,
    ));
  const front = await startFront();
  /** Where the front sends each page's requests, and the provider it signs in at. */
  const gatehouses = {
    gatehouse: [APP_PORT, IDP],
    'gatehouse-unisolated': [APP_PORT, IDP],
    'gatehouse-bff': [BFF_PORT, `http://localhost:${BFF_IDP_PORT}`],
    'gatehouse-baseline': [BASELINE_PORT, `http://localhost:${BASELINE_IDP_PORT}`],
    'gatehouse-other-site': [OTHER_SITE_APP_PORT, OTHER_SITE_IDP],
  };
  const upstream = (name) => gatehouses[name]?.[0] ?? servers[name].address().port;
  const idpOf = (name) => gatehouses[name]?.[1] ?? (name.endsWith('-other-site') ? OTHER_SITE_IDP : IDP);
  const strip = (name) => (name === 'gatehouse-unisolated' ? ISOLATION_HEADERS : []);
  const browser = await launchChromium();
  const measured = baseline ? ['gatehouse-baseline'] : [];
  const paints = Object.fromEntries(
    [...PEERS, ...GATEHOUSE_PAGES, 'gatehouse-bff', ...measured].map((name) => [name, []]),
  );
  const signIns = Object.fromEntries([...SIGNS_IN, ...measured].map((name) => [name, []]));
  try {
    // One unmeasured round each: the servers' and the browser's cold start are not what is compared.
    for (let i = -1; i < RUNS; i++) {
      for (const name of Object.keys(paints)) {
        front.route(upstream(name), strip(name));
        const result = await measureFirstPaint(browser, `${FRONT}/`);
        if (i >= 0) paints[name].push(result);
      }
      for (const name of Object.keys(signIns)) {
        front.route(upstream(name), strip(name));
        const result = await measureSignIn(browser, FRONT, idpOf(name), { api: CALLS_API.has(name) });
        if (i >= 0) signIns[name].push(result);
      }
    }
  } finally {
    await browser.close();
    gatehouse.kill('SIGTERM');
    bffServer.kill('SIGTERM');
    otherSiteServer.kill('SIGTERM');
    otherSiteProvider.kill('SIGTERM');
    baselineServer?.kill('SIGTERM');
    baseline?.remove();
    front.server.close();
    for (const server of Object.values(servers)) server.close();
  }
  return report(paints, signIns);
}

function report(paints, signIns) {
  const pages = {};
  for (const [name, runs] of Object.entries(paints)) {
    const of = (key) => median(runs.map((r) => r[key]));
    pages[name] = {
      fcpMs: of('fcp'),
      lcpMs: of('lcp'),
      jsBeforePaintGzipBytes: of('gzipped'),
      htmlResponseEndMs: of('html'),
      firstScriptResponseEndMs: of('firstScript'),
      domContentLoadedMs: of('domContentLoaded'),
      scriptsBeforePaint: runs.at(-1).scripts,
    };
  }
  // Pages measured for sign-in only (the provider on another site) have no first paint of their own.
  for (const [name, signedIn] of Object.entries(signIns)) {
    pages[name] ??= {};
    Object.assign(pages[name], {
      signInMs: median(signedIn.map((r) => r.ms)),
      toProviderMs: median(signedIn.map((r) => r.toProviderMs)),
      backMs: median(signedIn.map((r) => r.backMs)),
      inputDelayMs: median(signedIn.map((r) => r.inputDelayMs)),
      backSteps: Object.fromEntries(
        ['toCallbackMs', 'callbackHtmlMs', 'callbackParsedMs', 'afterParseMs'].map((key) => [
          key,
          median(signedIn.map((r) => r[key])),
        ]),
      ),
      providerCalls: signedIn.at(-1).calls,
      providerNavigations: signedIn.at(-1).navigations,
      reloadSignedInMs: median(signedIn.map((r) => r.reloadSignedInMs)),
      reloadShowedSignedOut: signedIn.filter((r) => r.reloadShowedSignedOut).length,
      apiCallMs: signedIn[0]?.apiMs === undefined ? undefined : median(signedIn.map((r) => r.apiMs)),
    });
  }
  const bare = pages['bare-react'];
  const oidc = pages['bare-oidc'];
  /** The bare library's sign-in with the provider where `name`'s is: on the same site, or another. */
  const signInBase = (name) => (name.endsWith('-other-site') ? pages['bare-oidc-other-site'] : oidc);
  console.log(`\nPages side by side (medians of ${RUNS} alternating runs; ratios to the peer in brackets)`);
  console.log(
    '  page                                          FCP (/bare React)   LCP (/bare React)   JS before paint gz (/bare React)',
  );
  for (const name of Object.keys(paints)) {
    const p = pages[name];
    console.log(
      `  ${LABELS[name].padEnd(46)}${`${ms(p.fcpMs)} (${ratio(p.fcpMs, bare.fcpMs)})`.padEnd(20)}` +
        `${`${ms(p.lcpMs)} (${ratio(p.lcpMs, bare.lcpMs)})`.padEnd(20)}` +
        `${kb(p.jsBeforePaintGzipBytes)} (${ratio(p.jsBeforePaintGzipBytes, bare.jsBeforePaintGzipBytes)})`,
    );
  }
  console.log('  where the time before paint went: HTML received / first script received / DOMContentLoaded');
  for (const name of Object.keys(paints)) {
    const p = pages[name];
    console.log(
      `  ${LABELS[name].padEnd(46)}${ms(p.htmlResponseEndMs)} / ${ms(p.firstScriptResponseEndMs)} / ${ms(p.domContentLoadedMs)}`,
    );
  }
  console.log(
    '\nSign-in, click "Sign in" -> signed-in UI painted, the provider\'s login page subtracted (/bare oidc-client-ts\n' +
      'with its provider on the same site, localhost, or on another, 127.0.0.1)',
  );
  for (const name of Object.keys(signIns)) {
    const p = pages[name];
    console.log(
      `  ${LABELS[name].padEnd(46)}${`${ms(p.signInMs)} (${ratio(p.signInMs, signInBase(name).signInMs)})`.padEnd(20)}` +
        `provider: ${p.providerCalls.length} calls, ${p.providerNavigations.length} navigations`,
    );
    console.log(
      `  ${''.padEnd(46)}click -> provider's form ${ms(p.toProviderMs)} (input delay ${ms(p.inputDelayMs)}), submit -> signed in ${ms(p.backMs)}`,
    );
    const steps = p.backSteps;
    console.log(
      `  ${''.padEnd(46)}the way back: to /callback ${ms(steps.toCallbackMs)}, its HTML ${ms(steps.callbackHtmlMs)}, ` +
        `parsed ${ms(steps.callbackParsedMs)}, then the page's own work ${ms(steps.afterParseMs)}`,
    );
    console.log(`  ${''.padEnd(46)}calls: ${p.providerCalls.join(', ')}`);
  }
  console.log(
    '\nReload of a signed-in page: time to the signed-in UI, and runs that showed a "Sign in" control',
  );
  for (const name of Object.keys(signIns)) {
    const p = pages[name];
    console.log(
      `  ${LABELS[name].padEnd(46)}${ms(p.reloadSignedInMs).padEnd(20)}signed-out UI shown in ${p.reloadShowedSignedOut} of ${RUNS}`,
    );
  }
  console.log(
    "\nOne API call through the app (the Profile link clicked -> its /api/me answer shown, the page's first visit), by mode",
  );
  for (const name of Object.keys(signIns)) {
    const p = pages[name];
    if (p.apiCallMs !== undefined) console.log(`  ${LABELS[name].padEnd(46)}${ms(p.apiCallMs)}`);
  }
  const bffPage = pages['gatehouse-bff'];
  console.log(
    `BFF mode against the browser mode in the same run: sign-in ${ratio(bffPage.signInMs, pages.gatehouse.signInMs)}, ` +
      `reload ${ratio(bffPage.reloadSignedInMs, pages.gatehouse.reloadSignedInMs)}, API call ${ratio(bffPage.apiCallMs, pages.gatehouse.apiCallMs)}`,
  );
  const goals = (name) =>
    `FCP ${ratio(pages[name].fcpMs, bare.fcpMs)} (<= 1.10), JS ${ratio(pages[name].jsBeforePaintGzipBytes, bare.jsBeforePaintGzipBytes)} (<= 1.5), ` +
    `sign-in ${ratio(pages[name].signInMs, oidc.signInMs)} (<= 1.00), provider calls ${pages[name].providerCalls.length} vs ${oidc.providerCalls.length}, ` +
    `reload flashes ${pages[name].reloadShowedSignedOut} (0)`;
  console.log(`\nGoals, Gatehouse as shipped: ${goals('gatehouse')}`);
  console.log(`Goals, without its COOP header: ${goals('gatehouse-unisolated')}`);
  const otherSite = pages['gatehouse-other-site'];
  const bareOtherSite = pages['bare-oidc-other-site'];
  console.log(
    `Goals, the provider on another site: sign-in ${ratio(otherSite.signInMs, bareOtherSite.signInMs)} (<= 1.00), ` +
      `provider calls ${otherSite.providerCalls.length} vs ${bareOtherSite.providerCalls.length}, ` +
      `reload flashes ${otherSite.reloadShowedSignedOut} (0)`,
  );
  const before = pages['gatehouse-baseline'];
  if (before) {
    const change = (key) => `${(((pages.gatehouse[key] - before[key]) / before[key]) * 100).toFixed(1)} %`;
    console.log(
      `Against ${BASELINE_REF} in the same run: sign-in ${ms(pages.gatehouse.signInMs)} vs ${ms(before.signInMs)} (${change('signInMs')}), ` +
        `FCP ${ms(pages.gatehouse.fcpMs)} vs ${ms(before.fcpMs)} (${change('fcpMs')}), ` +
        `reload ${ms(pages.gatehouse.reloadSignedInMs)} vs ${ms(before.reloadSignedInMs)} (${change('reloadSignedInMs')})`,
    );
  }
  return { runs: RUNS, baselineRef: BASELINE_REF, pages };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const results = await run();
  mkdirSync(out, { recursive: true });
  writeFileSync(path.join(out, 'first-paint-and-sign-in.json'), JSON.stringify(results, null, 2));
}

// What sender-constrained tokens cost (ADR 0037): Gatehouse with DPoP (the bundled provider's default)
// against the same build with a provider without it (DEV_IDP_DPOP=off), alternating in one run, in
// headless Chromium. Sign-in: click "Sign in" to the signed-in UI, the provider's login form subtracted
// (measureSignIn). API call: click "Profile" to the API's answer shown, which includes making the proof
// (and, with API_DPOP_NONCES, nothing more after the tab's first call). Knobs: BENCH_RUNS (7),
// BENCH_PORT_BASE (4300; this bench uses +10 to +13).
import { launchChromium, measureSignIn, median, startGatehouse } from './first-paint-and-sign-in.mjs';

const RUNS = Number(process.env.BENCH_RUNS ?? 7);
const API_CALLS = 10;
const BASE = Number(process.env.BENCH_PORT_BASE ?? 4300) + 10;
const MODES = {
  dpop: { label: 'DPoP-bound tokens', port: BASE, env: {} },
  bearer: { label: 'bearer tokens (provider without DPoP)', port: BASE + 2, env: { DEV_IDP_DPOP: 'off' } },
};

/** Median time from a click on "Profile" to the API's answer on screen, over API_CALLS clicks. */
async function measureApiCalls(browser, origin) {
  const context = await browser.newContext();
  const page = await context.newPage();
  await page.goto(origin);
  await page.getByRole('banner').getByRole('button', { name: 'Sign in' }).click();
  await page.getByLabel('Username').fill('alice');
  await page.getByLabel('Password').fill('alice');
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByTestId('display-name').waitFor();
  const times = [];
  for (let i = -1; i < API_CALLS; i++) {
    await page.getByRole('navigation').getByRole('link', { name: 'Home' }).click();
    await page.getByRole('heading', { level: 1 }).waitFor();
    const started = performance.now();
    await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
    // The call leaves from the token vault (a shared worker), whose requests Playwright does not see:
    // the answer on the page is the API's, with the signed-in user's `sub`.
    await page.getByTestId('api-me').filter({ hasText: '"sub"' }).waitFor();
    // The first call of the tab is not measured: it may learn the API's nonce.
    if (i >= 0) times.push(performance.now() - started);
  }
  // The API says which key, if any, the token it checked is bound to (RFC 9449 cnf.jkt).
  const { jkt } = JSON.parse((await page.getByTestId('api-me').textContent()) ?? '{}');
  const tokenType = jkt ? 'DPoP' : 'Bearer';
  await context.close();
  return { ms: median(times), tokenType };
}

export async function run() {
  const servers = {};
  for (const [name, mode] of Object.entries(MODES)) {
    servers[name] = await startGatehouse(
      { PUBLIC_ORIGIN: `http://localhost:${mode.port}`, TELEMETRY_CONSENT: 'implied', ...mode.env },
      mode.port,
      mode.port + 1,
    );
  }
  const browser = await launchChromium();
  const results = Object.fromEntries(Object.keys(MODES).map((name) => [name, { signIn: [], api: [] }]));
  try {
    for (let i = -1; i < RUNS; i++) {
      for (const [name, mode] of Object.entries(MODES)) {
        const origin = `http://localhost:${mode.port}`;
        const signIn = await measureSignIn(browser, origin, `http://localhost:${mode.port + 1}`);
        const api = await measureApiCalls(browser, origin);
        if (i < 0) continue;
        results[name].signIn.push(signIn.ms);
        results[name].api.push(api.ms);
        results[name].tokenType = api.tokenType;
      }
    }
  } finally {
    await browser.close();
    for (const server of Object.values(servers)) server.kill('SIGTERM');
  }
  const figures = Object.fromEntries(
    Object.entries(results).map(([name, r]) => [
      name,
      { tokenType: r.tokenType, signInMs: median(r.signIn), apiCallMs: median(r.api) },
    ]),
  );
  const { dpop, bearer } = figures;
  console.log(
    `\nDPoP cost (medians of ${RUNS} runs, alternating; API call: median of ${API_CALLS} clicks per run)`,
  );
  for (const [name, f] of Object.entries(figures)) {
    console.log(
      `  ${MODES[name].label.padEnd(40)} token type ${String(f.tokenType).padEnd(7)} sign-in ${f.signInMs.toFixed(0)} ms, ` +
        `Profile -> API answer ${f.apiCallMs.toFixed(1)} ms`,
    );
  }
  console.log(
    `  DPoP / bearer: sign-in ${(dpop.signInMs / bearer.signInMs).toFixed(2)}, API call ${(dpop.apiCallMs / bearer.apiCallMs).toFixed(2)}`,
  );
  if (dpop.tokenType !== 'DPoP' || bearer.tokenType !== 'Bearer') {
    throw new Error(`token types ${dpop.tokenType} / ${bearer.tokenType}: the modes did not hold`);
  }
  return { runs: RUNS, ...figures };
}

if (import.meta.url === `file://${process.argv[1]}`) await run();

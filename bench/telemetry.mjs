// What usage telemetry costs the public page and the app's calls, from one run:
// - gzipped JS before first paint, and the largest contentful paint, with telemetry on (consent given,
//   so the SDK loads after the first paint) against off (no consent: the SDK never loads);
// - the latency of a fetch tracked by the SDK (with its traceparent header) against the same fetch
//   untracked, each a median of many calls on the same page origin, one call at a time with a pause
//   between them (BENCH_FETCH_GAP_MS), as a user's clicks make them: what each call costs its caller,
//   not what a page calling without pause can sustain.
// Knobs: BENCH_LOADS (7), BENCH_FETCHES (200), BENCH_FETCH_GAP_MS (20; 0: back to back).
import { kb, launchChromium, measureFirstPaint, median, startGatehouse } from './first-paint-and-sign-in.mjs';

const LOADS = Number(process.env.BENCH_LOADS ?? 7);
const FETCHES = Number(process.env.BENCH_FETCHES ?? 200);
const GAP_MS = Number(process.env.BENCH_FETCH_GAP_MS ?? 20);
const APP = 'http://localhost:4320';

/** A browser whose visitor has already answered the consent banner. */
const withConsent = (choice) => ({
  storageState: {
    cookies: [],
    origins: [{ origin: APP, localStorage: [{ name: 'gatehouse.telemetry-consent', value: choice }] }],
  },
});

async function fetchLatency(browser, contextOptions, expectTracked) {
  const context = await browser.newContext(contextOptions);
  const page = await context.newPage();
  let sawTraceparent = false;
  page.on('request', (request) => {
    if (request.url().endsWith('/api/nothing') && request.headers().traceparent) sawTraceparent = true;
  });
  await page.goto(APP);
  if (expectTracked) await page.waitForFunction(() => document.cookie.includes('ai_session='));
  // Both pages settle alike before the calls: the SDK's start (its first page view, web vitals) is not a
  // call's cost.
  await page.waitForTimeout(1_000);
  const { times, network } = await page.evaluate(
    async ({ count, gap }) => {
      performance.setResourceTimingBufferSize(count + 100);
      performance.clearResourceTimings();
      const results = [];
      for (let i = 0; i < count; i++) {
        if (gap > 0) await new Promise((resolve) => setTimeout(resolve, gap));
        const started = performance.now();
        await (await fetch('/api/nothing')).text();
        results.push(performance.now() - started);
      }
      // The browser's own account of each call, from the fetch's start to the answer's last byte.
      const calls = performance.getEntriesByType('resource').filter((e) => e.name.endsWith('/api/nothing'));
      return { times: results, network: calls.map((e) => e.responseEnd - e.startTime) };
    },
    { count: FETCHES, gap: GAP_MS },
  );
  await context.close();
  if (sawTraceparent !== expectTracked)
    throw new Error(`expected tracked=${expectTracked}, saw ${sawTraceparent}`);
  return { ms: median(times), networkMs: median(network) };
}

export async function run() {
  const server = await startGatehouse({ TELEMETRY_CONSENT: 'ask' }, 4320, 4321);
  const browser = await launchChromium();
  try {
    await measureFirstPaint(browser, APP, withConsent('granted')); // warm-up
    const on = [];
    const off = [];
    for (let i = 0; i < LOADS; i++) {
      on.push(await measureFirstPaint(browser, APP, withConsent('granted')));
      off.push(await measureFirstPaint(browser, APP, withConsent('denied')));
    }
    const tracked = await fetchLatency(browser, withConsent('granted'), true);
    const untracked = await fetchLatency(browser, withConsent('denied'), false);
    const results = {
      jsBeforePaint: {
        onGzipBytes: median(on.map((r) => r.gzipped)),
        offGzipBytes: median(off.map((r) => r.gzipped)),
      },
      lcp: { onMs: median(on.map((r) => r.lcp)), offMs: median(off.map((r) => r.lcp)) },
      fetch: {
        trackedMs: tracked.ms,
        untrackedMs: untracked.ms,
        trackedNetworkMs: tracked.networkMs,
        untrackedNetworkMs: untracked.networkMs,
        calls: FETCHES,
        gapMs: GAP_MS,
      },
    };
    const ratio = (a, b) => (a / b).toFixed(2);
    console.log('\nTelemetry on (consent given) vs off, public home page (medians of %d loads)', LOADS);
    console.log(
      '  gzipped JS before first paint: on %s, off %s, ratio %s',
      kb(results.jsBeforePaint.onGzipBytes),
      kb(results.jsBeforePaint.offGzipBytes),
      ratio(results.jsBeforePaint.onGzipBytes, results.jsBeforePaint.offGzipBytes),
    );
    console.log(
      '  largest contentful paint:      on %s ms, off %s ms, ratio %s',
      results.lcp.onMs.toFixed(0),
      results.lcp.offMs.toFixed(0),
      ratio(results.lcp.onMs, results.lcp.offMs),
    );
    console.log(
      '  fetch latency (median of %d, %s): tracked %s ms, untracked %s ms, ratio %s, added %s ms',
      FETCHES,
      GAP_MS > 0 ? `one every ${GAP_MS} ms or more` : 'back to back',
      tracked.ms.toFixed(2),
      untracked.ms.toFixed(2),
      ratio(tracked.ms, untracked.ms),
      (tracked.ms - untracked.ms).toFixed(2),
    );
    // Where the added time is: the request and its answer on the wire (resource timing), or the page's
    // main thread (the SDK's hooks and reporting, and the answer's body waiting for that thread).
    console.log(
      '    of which on the wire (resource timing, fetch start to last byte): tracked %s ms, untracked %s ms',
      tracked.networkMs.toFixed(2),
      untracked.networkMs.toFixed(2),
    );
    return results;
  } finally {
    await browser.close();
    server.kill('SIGTERM');
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();

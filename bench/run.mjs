// `npm run bench`: every benchmark, one after the other, each printing its figures. The raw results
// are also written to bench/.out/results.json for comparison between runs.
//
// It exits 0 only when every figure is valid: a bench that saw a failed request, or items acknowledged
// and not stored, says INVALID beside the figure and sets a non-zero exit code, as does a bench that
// stops with an error.
//
// `npm run bench -- --short` (or BENCH_SHORT=1) runs every bench briefly, to see that each works, as CI
// would: one run or load each, two seconds of load, 20,000 items for the dashboard. Its figures show
// that the benches work, not what the machine can do. A knob set in the environment wins over both.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';

const SHORT = process.argv.includes('--short') || process.env.BENCH_SHORT === '1';
if (SHORT) {
  const brief = {
    BENCH_RUNS: '1',
    BENCH_LOADS: '1',
    BENCH_FETCHES: '20',
    BENCH_SECONDS: '2',
    BENCH_USAGE_ITEMS: '20000',
    BENCH_USAGE_RUNS: '3',
  };
  for (const [name, value] of Object.entries(brief)) process.env[name] ??= value;
  console.log('Short mode: each bench briefly, to see that it works; the figures are not the machine’s.');
}

/** A bench in this process: its figures, or its error (the run goes on, and exits non-zero). */
async function inProcess(title, module) {
  try {
    // Imported here, after the short mode's knobs are in the environment the benches read at import.
    const { run } = await import(module);
    return await run();
  } catch (error) {
    process.exitCode = 1;
    console.error(`\n${title} stopped: ${error instanceof Error ? error.stack : String(error)}`);
    return { error: String(error) };
  }
}

const results = {
  machine: { cpus: cpus().length, node: process.version, short: SHORT },
  firstPaintAndSignIn: await inProcess('First paint and sign-in', './first-paint-and-sign-in.mjs'),
  dpop: await inProcess('DPoP', './dpop.mjs'),
  telemetry: await inProcess('Telemetry', './telemetry.mjs'),
  replicas: await inProcess('Replicas', './replicas.mjs'),
  container: await inProcess('Container image', './container.mjs'),
};

// The collector's benchmarks run in processes of their own (they start worker threads and fill stores).
const failed = [];
for (const [title, script] of [
  ['Collector throughput', 'bench/collector.mjs'],
  ['Usage dashboard queries over 1,000,000 items', 'bench/usage.mjs'],
  ['Relay to Azure Monitor (a stand-in endpoint), against the local store', 'bench/relay.mjs'],
]) {
  console.log(`\n${title}`);
  const child = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (child.status !== 0) {
    process.exitCode = 1;
    failed.push(title);
  }
}

mkdirSync(new URL('.out/', import.meta.url), { recursive: true });
writeFileSync(new URL('.out/results.json', import.meta.url), JSON.stringify(results, null, 2));
console.log('\nRaw results: bench/.out/results.json');
const stopped = Object.entries(results).filter(([, value]) => value && 'error' in value);
if (process.exitCode)
  console.log(
    `Not every figure is valid: ${[...stopped.map(([name]) => `${name} stopped`), ...failed.map((t) => `${t} failed`), 'see INVALID above'].join('; ')}.`,
  );

// `npm run bench`: every benchmark, one after the other, each printing its figures. The raw results
// are also written to bench/.out/results.json for comparison between runs.
import { spawnSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { run as container } from './container.mjs';
import { run as dpop } from './dpop.mjs';
import { run as firstPaintAndSignIn } from './first-paint-and-sign-in.mjs';
import { run as replicas } from './replicas.mjs';
import { run as telemetry } from './telemetry.mjs';

const results = {
  machine: { cpus: cpus().length, node: process.version },
  firstPaintAndSignIn: await firstPaintAndSignIn(),
  dpop: await dpop(),
  telemetry: await telemetry(),
  replicas: await replicas(),
  container: await container(),
};

// The collector's benchmarks run in processes of their own (they start worker threads and fill stores).
for (const [title, script] of [
  ['Collector throughput', 'bench/collector.mjs'],
  ['Usage dashboard queries over 1,000,000 items', 'bench/usage.mjs'],
  ['Relay to Azure Monitor (a stand-in endpoint), against the local store', 'bench/relay.mjs'],
]) {
  console.log(`\n${title}`);
  const child = spawnSync(process.execPath, [script], { stdio: 'inherit' });
  if (child.status !== 0) process.exitCode = 1;
}

mkdirSync(new URL('.out/', import.meta.url), { recursive: true });
writeFileSync(new URL('.out/results.json', import.meta.url), JSON.stringify(results, null, 2));
console.log('\nRaw results: bench/.out/results.json');

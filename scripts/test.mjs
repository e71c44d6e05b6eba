#!/usr/bin/env node
// `npm test`: the checks in order (format, build, lint, typecheck, unit, end-to-end), stopping at the first
// that fails, then the time each stage took, so a slow stage shows where to look. `npm run <stage script>`
// runs one stage alone.
import { spawnSync } from 'node:child_process';

const STAGES = [
  ['format', 'format:check'],
  ['build', 'build'],
  ['lint', 'lint'],
  ['typecheck', 'typecheck'],
  ['unit', 'test:unit'],
  ['e2e', 'test:e2e'],
];

const seconds = (ms) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;
const times = [];
let failed;
const started = Date.now();
for (const [name, script] of STAGES) {
  const start = Date.now();
  // npm is a .cmd on Windows, which only a shell runs.
  const run = spawnSync('npm', ['run', script], { stdio: 'inherit', shell: process.platform === 'win32' });
  times.push([name, Date.now() - start]);
  if (run.status !== 0) {
    failed = { name, code: run.status ?? 1 };
    break;
  }
}
const width = Math.max(...times.map(([name]) => name.length));
console.info(`\nnpm test, time per stage${failed ? ` (stopped: ${failed.name} failed)` : ''}:`);
for (const [name, ms] of times) console.info(`  ${name.padEnd(width)}  ${seconds(ms).padStart(6)}`);
console.info(`  ${'total'.padEnd(width)}  ${seconds(Date.now() - started).padStart(6)}`);
process.exit(failed ? failed.code : 0);

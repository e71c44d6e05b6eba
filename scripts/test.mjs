#!/usr/bin/env node
// `npm test`: the checks (format, build, lint, typecheck, unit, end-to-end), stopping after the first group
// in which one fails, then the time each stage took, so a slow stage shows where to look. `npm run <stage
// script>` runs one stage alone.
//
// Stages of one group run side by side: each of them is one single-threaded process for most of its time
// (prettier, tsc, eslint), so two of them share two cores without slowing each other much. Their output is
// held and printed whole when each ends, so it does not interleave.
import { spawn } from 'node:child_process';

const GROUPS = [
  [
    ['format', 'format:check'],
    ['build', 'build'],
  ],
  [
    ['lint', 'lint'],
    ['typecheck', 'typecheck'],
  ],
  [['unit', 'test:unit']],
  [['e2e', 'test:e2e']],
];

const seconds = (ms) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** Runs `npm run <script>`; a stage alone in its group writes straight to the terminal. */
function runStage([name, script], alone) {
  const start = Date.now();
  // npm is a .cmd on Windows, which only a shell runs.
  const child = spawn('npm', ['run', script], {
    stdio: alone ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    shell: process.platform === 'win32',
  });
  const output = [];
  child.stdout?.on('data', (chunk) => output.push(chunk));
  child.stderr?.on('data', (chunk) => output.push(chunk));
  return new Promise((resolve) => {
    child.on('close', (code, signal) => {
      if (!alone) process.stdout.write(Buffer.concat(output));
      resolve({ name, ms: Date.now() - start, code: code ?? (signal ? 1 : 0) });
    });
  });
}

const times = [];
let failed;
const started = Date.now();
for (const group of GROUPS) {
  const results = await Promise.all(group.map((stage) => runStage(stage, group.length === 1)));
  times.push(...results);
  failed = results.find((result) => result.code !== 0);
  if (failed) break;
}
const width = Math.max(...times.map(({ name }) => name.length));
console.info(`\nnpm test, time per stage${failed ? ` (stopped: ${failed.name} failed)` : ''}:`);
for (const [index, group] of GROUPS.entries()) {
  const ran = times.filter(({ name }) => group.some(([stage]) => stage === name));
  for (const { name, ms } of ran)
    console.info(
      `  ${name.padEnd(width)}  ${seconds(ms).padStart(6)}${group.length > 1 ? `  (group ${index + 1}, side by side)` : ''}`,
    );
}
console.info(`  ${'total'.padEnd(width)}  ${seconds(Date.now() - started).padStart(6)}`);
process.exit(failed ? failed.code : 0);

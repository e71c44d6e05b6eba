#!/usr/bin/env node
// `npm test`: every check, stopping at the first that fails, then the time each stage took, so a slow
// stage shows where to look. `npm run <stage script>` runs one stage alone.
//
// Stages in one step run side by side (docs/decisions/0131): the format check reads the sources while
// the build writes `dist`, and lint and the type check read them once it is there (the server's typed
// lint needs the collector's build). A stage alone in its step prints as it goes; side by side, each
// prints its output whole when it ends, so the two never interleave. When one fails, the other stops.
import { spawn } from 'node:child_process';

const STEPS = [
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

const windows = process.platform === 'win32';
const seconds = (ms) => `${(ms / 1000).toFixed(ms < 10_000 ? 1 : 0)} s`;

/** Runs one stage's npm script; `live`: its output as it comes, else kept and handed back. */
function run(name, script, live) {
  const start = Date.now();
  // npm is a .cmd on Windows, which only a shell runs. Elsewhere the stage leads a process group of its
  // own, so stopping it stops what it started (servers, browsers).
  const child = spawn('npm', ['run', script], {
    stdio: live ? 'inherit' : ['ignore', 'pipe', 'pipe'],
    shell: windows,
    detached: !windows,
  });
  const output = [];
  child.stdout?.on('data', (chunk) => output.push(chunk));
  child.stderr?.on('data', (chunk) => output.push(chunk));
  const ended = new Promise((resolve) =>
    child.on('close', (code) =>
      resolve({
        name,
        ms: Date.now() - start,
        // Ended by a signal (stopped): no exit code, a failure all the same.
        code: code ?? 1,
        output: Buffer.concat(output),
      }),
    ),
  );
  const stop = () => {
    try {
      if (windows) child.kill();
      else process.kill(-child.pid, 'SIGTERM');
    } catch {
      // Already gone.
    }
  };
  return { ended, stop };
}

const times = [];
let failed;
const started = Date.now();
for (const step of STEPS) {
  const live = step.length === 1;
  const runs = step.map(([name, script]) => run(name, script, live));
  const stopAll = () => runs.forEach((stage) => stage.stop());
  // An interrupted `npm test` stops its stages too.
  process.once('SIGINT', stopAll);
  process.once('SIGTERM', stopAll);
  const results = await Promise.all(
    runs.map(async ({ ended }) => {
      const result = await ended;
      if (result.code !== 0 && !failed) {
        failed = { name: result.name, code: result.code };
        stopAll();
      }
      const stopped = result.code !== 0 && failed.name !== result.name;
      // Side by side, a stage's output comes whole when it ends (a stopped one's says nothing).
      if (!live && !stopped) {
        process.stdout.write(`\n── ${result.name} (${seconds(result.ms)}) ──\n`);
        process.stdout.write(result.output);
      }
      return { ...result, note: result.code === 0 ? '' : stopped ? ' (stopped)' : ' (failed)' };
    }),
  );
  times.push(...results.map(({ name, ms, note }) => [name, ms, note]));
  process.removeListener('SIGINT', stopAll);
  process.removeListener('SIGTERM', stopAll);
  if (failed) break;
}
const sideBySide = STEPS.filter((step) => step.length > 1).map((step) =>
  step.map(([name]) => name).join(' + '),
);
const width = Math.max(...times.map(([name]) => name.length));
console.info(`\nnpm test, time per stage${failed ? ` (stopped: ${failed.name} failed)` : ''}:`);
for (const [name, ms, note] of times)
  console.info(`  ${name.padEnd(width)}  ${seconds(ms).padStart(6)}${note}`);
console.info(`  ${'total'.padEnd(width)}  ${seconds(Date.now() - started).padStart(6)}`);
console.info(`  (side by side: ${sideBySide.join('; ')})`);
process.exit(failed ? failed.code : 0);

// Installs, builds, starts and unit-tests Gatehouse under other Node.js majors (default: 22 and 24), each in a
// fresh clone of the committed HEAD, with that Node taken from the npm registry's `node-<os>-<arch>` package
// (what the `node` package installs from its preinstall script; taken directly, no install script runs).
// Native modules are compiled against that Node's own headers, which the package ships, so a module built
// for this machine's Node cannot pass for it.
//
//   npm run test:node-versions            # 22 and 24
//   npm run test:node-versions -- 24      # one major
//
// Uncommitted changes are not tested: the clone is what a newcomer gets.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const repo = path.resolve(import.meta.dirname, '..');
const majors = process.argv.slice(2).length > 0 ? process.argv.slice(2) : ['22', '24'];
// Ports of their own, clear of `npm start` (3000) and of the e2e suites (E2E_PORT_BASE + 0..99).
const basePort = Number(process.env.NODE_VERSIONS_PORT ?? 4900);
const keep = process.env.KEEP_NODE_VERSIONS_DIR === '1';

class StepError extends Error {
  constructor(step, detail) {
    super(`${step} failed${detail ? `: ${detail}` : ''}`);
    this.code = 'NODE_VERSION_STEP_FAILED';
    this.step = step;
  }
}

/** Runs a command to completion with output shown; throws a StepError naming the step when it fails. */
function run(step, command, args, options) {
  console.info(`\n$ ${command} ${args.join(' ')}`);
  const result = spawnSync(command, args, { stdio: 'inherit', ...options });
  if (result.status !== 0) throw new StepError(step, `exit ${result.status ?? result.signal}`);
}

async function timed(label, timings, action) {
  const started = performance.now();
  try {
    return await action();
  } finally {
    timings.push(`${label} ${((performance.now() - started) / 1000).toFixed(0)} s`);
  }
}

/** Polls `url` until it answers 200, the process exits, or `timeoutMs` passes. */
async function waitForOk(url, child, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new StepError('start', `the server exited with ${child.exitCode}`);
    try {
      const response = await fetch(url);
      if (response.ok) return response;
    } catch {
      // Not listening yet.
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  throw new StepError('start', `${url} did not answer 200 within ${timeoutMs / 1000} s`);
}

/** Starts the built server as `npm start` does, and checks the app page and the local provider answer. */
async function checkServer(dir, env, port) {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gatehouse-node-data-'));
  const child = spawn(process.platform === 'win32' ? 'node.exe' : 'node', ['apps/server/dist/main.js'], {
    cwd: dir,
    env: { ...env, PORT: String(port), IDP_PORT: String(port + 1), GATEHOUSE_DATA_DIR: dataDir },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  try {
    const page = await waitForOk(`http://localhost:${port}/`, child, 60_000);
    const html = await page.text();
    if (!html.includes('<div id="root"')) throw new StepError('start', 'the app page has no root element');
    await waitForOk(`http://localhost:${port + 1}/.well-known/openid-configuration`, child, 30_000);
    console.info(`the server answered on :${port} and its local provider on :${port + 1}`);
  } finally {
    child.kill('SIGTERM');
    await new Promise((resolve) => (child.exitCode !== null ? resolve() : child.once('exit', resolve)));
    rmSync(dataDir, { recursive: true, force: true });
  }
}

async function testMajor(major, index) {
  const timings = [];
  const work = mkdtempSync(path.join(tmpdir(), `gatehouse-node${major}-`));
  try {
    const nodePackage = `node-${process.platform}-${process.arch}`;
    const toolDir = path.join(work, 'node');
    await timed('node download', timings, () =>
      run('download Node', 'npm', [
        'install',
        '--prefix',
        toolDir,
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        `${nodePackage}@${major}`,
      ]),
    );
    const nodeHome = path.join(toolDir, 'node_modules', nodePackage);
    const binDir = path.join(nodeHome, 'bin');
    const env = {
      ...process.env,
      PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
      // node-gyp compiles against these headers, never another Node's (a user .npmrc may name one).
      npm_config_nodedir: nodeHome,
    };
    delete env.NODE_OPTIONS;
    const version = spawnSync(path.join(binDir, 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (!version.startsWith(`v${major}.`))
      throw new StepError('download Node', `got ${version || 'nothing'}`);
    console.info(`\n=== Node ${version} ===`);

    const dir = path.join(work, 'gatehouse');
    run('clone', 'git', ['clone', '--quiet', repo, dir]);
    const inClone = { cwd: dir, env };
    await timed('npm ci', timings, () => run('npm ci', 'npm', ['ci', '--no-audit', '--no-fund'], inClone));
    await timed('build', timings, () => run('build', 'npm', ['run', 'build'], inClone));
    await timed('start', timings, () => checkServer(dir, env, basePort + index * 10));
    await timed('unit tests', timings, () => run('unit tests', 'npm', ['run', 'test:unit'], inClone));
    return { major, version, ok: true, timings };
  } catch (error) {
    console.error(error);
    return { major, version: `${major}.x`, ok: false, failed: error.step ?? String(error), timings };
  } finally {
    if (keep) console.info(`kept ${work}`);
    else if (existsSync(work)) rmSync(work, { recursive: true, force: true });
  }
}

const results = [];
for (const [index, major] of majors.entries()) results.push(await testMajor(major, index));

console.info('\nNode versions:');
for (const result of results) {
  const outcome = result.ok ? 'ok' : `FAILED at ${result.failed}`;
  console.info(`  ${result.version.padEnd(9)} ${outcome.padEnd(24)} ${result.timings.join(', ')}`);
}
if (results.some((result) => !result.ok)) process.exitCode = 1;

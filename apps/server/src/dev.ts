/**
 * `npm run dev` (ADR 0055): the development loop. This process holds what must outlive a restart (the
 * local provider, so a sign-in survives an edit of the server; the collector's build in watch mode) and
 * runs the app server under `tsx watch`, which restarts it whenever one of its sources changes. The app
 * server serves the SPA from its sources through Vite (`--dev`): an edit to a page shows without a reload.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { startBundledProvider } from './bundled-provider.js';
import { ConfigError, loadConfig } from './config.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
const require = createRequire(import.meta.url);

/** Runs `command` (Node by default), its output passed through; resolves once `ready` is printed (or at once). */
function run(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready?: RegExp,
  command = process.execPath,
): Promise<ChildProcess> {
  const child = spawn(command, args, { cwd: repo, env, stdio: ['inherit', 'pipe', 'inherit'] });
  return new Promise((resolve, reject) => {
    if (!ready) resolve(child);
    child.stdout?.on('data', (chunk: Buffer) => {
      process.stdout.write(chunk);
      if (ready?.test(String(chunk))) resolve(child);
    });
    child.once('exit', (code) => reject(new Error(`${args.join(' ')} exited with ${code}`)));
  });
}

/**
 * TypeScript 7's own executable (docs/decisions/0133). Its `bin/tsc` is a Node script that, on Node
 * before 22.15, starts the executable as a child: stopping the script would leave the watcher running.
 */
function nativeTsc(): string {
  const typescript = require.resolve('typescript-7/package.json');
  const platform = `@typescript/typescript-${process.platform}-${process.arch}/package.json`;
  const folder = path.join(path.dirname(createRequire(typescript).resolve(platform)), 'lib');
  return path.join(folder, process.platform === 'win32' ? 'tsc.exe' : 'tsc');
}

async function dev() {
  // What the app server will be started as (--dev below): refused here first, before anything starts.
  const config = loadConfig(process.env, { dev: true });
  const children: ChildProcess[] = [];
  const env: NodeJS.ProcessEnv = { ...process.env };
  let provider: Awaited<ReturnType<typeof startBundledProvider>> | undefined;
  if (config.oidc.authority === undefined) {
    provider = await startBundledProvider(config, (line) => console.info(`dev-idp: ${line}`));
    // The app server restarts; the provider it was given does not, nor the sessions it holds.
    Object.assign(env, {
      OIDC_AUTHORITY: provider.issuer,
      OIDC_CLIENT_ID: config.oidc.clientId,
      OIDC_AUDIENCE: config.oidc.audience,
    });
  }

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.info(`${signal} received: stopping.`);
    for (const child of children) child.kill('SIGTERM');
    void Promise.all([
      ...children.map((child) =>
        child.exitCode === null ? new Promise((resolve) => child.once('exit', resolve)) : undefined,
      ),
      provider?.close(),
    ]).finally(() => process.exit(0));
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));

  // The collector runs built (its ingestion worker is a file of the build): tsc rebuilds it on a change,
  // and the app server, which imports the build, restarts.
  children.push(
    await run(
      ['--watch', '--preserveWatchOutput', '-p', 'packages/collector/tsconfig.build.json'],
      env,
      /Watching for file changes/,
      nativeTsc(),
    ),
  );
  children.push(
    await run(
      [
        require.resolve('tsx/cli'),
        'watch',
        '--clear-screen=false',
        // The SPA's files are Vite's to reload; the workspace packages come from their sources.
        '--ignore',
        'apps/web/**',
        '--conditions=@gatehouse/source',
        'apps/server/src/main.ts',
        '--dev',
      ],
      env,
    ),
  );
}

dev().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});

/**
 * Compiles the package with tsc, for tests that must run the real thing in a child `node` process
 * (vitest transforms TypeScript only inside its own process). The folder sits under the package's
 * node_modules so the compiled files resolve the same dependencies and stay out of git.
 *
 * One build serves every test file and every run until a source changes: it is named after a hash of
 * what tsc reads to emit it, and the first test file to need it builds it while the others wait.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));
const cache = path.join(packageDir, 'node_modules', '.cache');
const PREFIX = 'collector-test-build-';

export interface CompiledPackage {
  /** Folder holding the compiled src/ (index.js, cli/export.js, test-support/...): tsconfig.testing.json. */
  dir: string;
}

/** Every file under `dir`, sorted, as paths relative to the package. */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => path.join(dir, name))
    .filter((file) => statSync(file).isFile())
    .sort();
}

/** A hash of what the emitted JavaScript depends on: the sources, the tsconfig chain and tsc itself. */
function inputsHash(tsc: string): string {
  const hash = createHash('sha256');
  const inputs = [
    ...filesUnder(path.join(packageDir, 'src')).filter((file) => !file.endsWith('.test.ts')),
    path.join(packageDir, 'tsconfig.json'),
    path.join(packageDir, 'tsconfig.testing.json'),
    path.join(packageDir, '..', '..', 'tsconfig.base.json'),
    path.join(path.dirname(tsc), '..', 'package.json'),
  ];
  for (const file of inputs)
    hash.update(path.relative(packageDir, file)).update('\0').update(readFileSync(file));
  return hash.digest('hex').slice(0, 16);
}

const sleep = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

export function compilePackage(): CompiledPackage {
  mkdirSync(cache, { recursive: true });
  // TypeScript 7, the compiler of the build (docs/decisions/0133); its package exports no `bin/`.
  const typescript = createRequire(import.meta.url).resolve('typescript-7/package.json');
  const tsc = path.join(path.dirname(typescript), 'bin', 'tsc');
  const name = `${PREFIX}${inputsHash(tsc)}`;
  const dir = path.join(cache, name);
  const lock = `${dir}.lock`;
  while (!existsSync(dir)) {
    try {
      mkdirSync(lock); // Atomic: one builder; the others wait for the folder to appear.
    } catch {
      // A builder that died leaves its lock: five minutes on, nobody is building any more.
      const since = statSync(lock, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
      if (Date.now() - since > 300_000) rmSync(lock, { recursive: true, force: true });
      sleep(200);
      continue;
    }
    try {
      if (existsSync(dir)) break;
      // Builds of older sources, and what a builder that died left half done.
      for (const old of readdirSync(cache))
        if (old.startsWith(PREFIX) && old !== `${name}.lock`)
          rmSync(path.join(cache, old), { recursive: true, force: true });
      const building = `${dir}.tmp`;
      // The typecheck stage checks the types; emitting without checking them gives the same JavaScript
      // in less than half the time.
      execFileSync(
        process.execPath,
        [
          tsc,
          '-p',
          path.join(packageDir, 'tsconfig.testing.json'),
          '--outDir',
          building,
          '--sourceMap',
          'false',
          '--declaration',
          'false',
          '--noCheck',
        ],
        { stdio: 'pipe' },
      );
      renameSync(building, dir); // Whole or not at all: a waiting test never sees half a build.
    } finally {
      rmSync(lock, { recursive: true, force: true });
    }
  }
  return { dir };
}

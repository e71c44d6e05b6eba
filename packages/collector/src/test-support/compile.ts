/**
 * Compiles the package with tsc into a fresh folder, for tests that must run the real thing in a child
 * `node` process (vitest transforms TypeScript only inside its own process). The folder sits under the
 * package's node_modules so the compiled files resolve the same dependencies and stay out of git.
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = fileURLToPath(new URL('../..', import.meta.url));

export interface CompiledPackage {
  /** Folder holding the compiled src/ (index.js, cli/export.js, test-support/...): tsconfig.testing.json. */
  dir: string;
  remove(): void;
}

export function compilePackage(): CompiledPackage {
  const cache = path.join(packageDir, 'node_modules', '.cache');
  mkdirSync(cache, { recursive: true });
  const dir = mkdtempSync(path.join(cache, 'collector-test-build-'));
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  execFileSync(
    process.execPath,
    [
      tsc,
      '-p',
      path.join(packageDir, 'tsconfig.testing.json'),
      '--outDir',
      dir,
      '--sourceMap',
      'false',
      '--declaration',
      'false',
    ],
    { stdio: 'pipe' },
  );
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

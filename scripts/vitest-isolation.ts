import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A test file that replaces modules (`vi.mock`), picks another environment, or loads one of the Node.js
 * Application Insights SDKs (which patch `http` and set process-wide state) needs a module graph of its
 * own. Every other file of a project shares one module graph per worker (`isolate: false`): a fresh one
 * costs each file its imports again (DuckDB, the collector, the provider), more than most files' tests
 * take. What a test may leave behind (stubbed globals and environment, spies, fake timers) is undone after
 * each test by the projects' options and setup files.
 */
const NEEDS_ITS_OWN =
  /\bvi\.(mock|doMock|unmock|doUnmock|resetModules)\(|@vitest-environment|['"]applicationinsights['"]/;
const TESTS = /\.test\.tsx?$/;

/**
 * The test files under `dirs` (relative to `root`, searched recursively), as paths relative to `root`,
 * split into those that may share a module graph and those that need their own.
 */
export function testFilesByIsolation(root: string, dirs: string[]): { shared: string[]; isolated: string[] } {
  const files = dirs
    .flatMap((dir) =>
      readdirSync(join(root, dir), { recursive: true, encoding: 'utf8' })
        .filter((file) => TESTS.test(file) && !file.split(/[/\\]/).includes('node_modules'))
        .map((file) => `${dir}/${file.replaceAll('\\', '/')}`),
    )
    .sort();
  const isolated = files.filter((file) => NEEDS_ITS_OWN.test(readFileSync(join(root, file), 'utf8')));
  return { shared: files.filter((file) => !isolated.includes(file)), isolated };
}

import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { defaultClientConditions } from 'vite';
import { defineProject, type TestProjectInlineConfiguration } from 'vitest/config';
import { pagesPlugin } from './pages-plugin.ts';

const root = import.meta.dirname;
const TESTS = /\.test\.tsx?$/;

/**
 * A test file that replaces modules (`vi.mock`) or picks another environment needs a module graph and a
 * window of its own. Every other file shares one jsdom window and module graph per worker (`isolate:
 * false`): a fresh jsdom costs about a second a file, more than most files' tests take. What a test may
 * leave behind in the shared window (stubbed globals, fake timers, storage, the address, mounted
 * components) is undone after each test by the options below and `src/test-setup.ts`.
 */
const NEEDS_ITS_OWN = /\bvi\.(mock|doMock|unmock|doUnmock|resetModules)\(|@vitest-environment/;

function testFiles(): { shared: string[]; isolated: string[] } {
  const files = readdirSync(join(root, 'src'), { recursive: true, encoding: 'utf8' })
    .filter((file) => TESTS.test(file))
    .map((file) => `src/${file.replaceAll('\\', '/')}`)
    .sort();
  const isolated = files.filter((file) => NEEDS_ITS_OWN.test(readFileSync(join(root, file), 'utf8')));
  return { shared: files.filter((file) => !isolated.includes(file)), isolated };
}

const base = {
  plugins: [pagesPlugin()],
  resolve: { conditions: ['@gatehouse/source', ...defaultClientConditions] },
};
const test = {
  root,
  environment: 'jsdom',
  setupFiles: ['./src/test-setup.ts'],
  unstubGlobals: true,
  unstubEnvs: true,
} satisfies TestProjectInlineConfiguration['test'];

/** The SPA's tests as two projects of the root `vitest.config.ts`: the shared window and the isolated files. */
export function webProjects(): TestProjectInlineConfiguration[] {
  const { shared, isolated } = testFiles();
  return [
    { ...base, test: { ...test, name: 'web', include: shared, isolate: false } },
    { ...base, test: { ...test, name: 'web (isolated)', include: isolated } },
  ];
}

/** `vitest` run inside apps/web: every file isolated, as before. */
export default defineProject({
  ...base,
  test: { ...test, name: 'web', include: ['src/**/*.test.{ts,tsx}'] },
});

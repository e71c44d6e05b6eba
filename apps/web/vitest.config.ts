import { defaultClientConditions } from 'vite';
import { defineProject, type TestProjectInlineConfiguration } from 'vitest/config';
import { testFilesByIsolation } from '../../scripts/vitest-isolation.ts';
import { pagesPlugin } from './pages-plugin.ts';

const root = import.meta.dirname;

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

/**
 * The SPA's tests as two projects of the root `vitest.config.ts`: most files share one jsdom window and
 * module graph per worker (a fresh jsdom costs about a second a file), the rest are isolated
 * (`scripts/vitest-isolation.ts`). What a test may leave behind in the shared window (stubbed globals,
 * fake timers, storage, the address, mounted components) is undone after each test by the options above
 * and `src/test-setup.ts`.
 */
export function webProjects(): TestProjectInlineConfiguration[] {
  const { shared, isolated } = testFilesByIsolation(root, ['src']);
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

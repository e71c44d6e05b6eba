import { availableParallelism } from 'node:os';
import { existsSync, readdirSync } from 'node:fs';
import { defaultServerConditions } from 'vite';
import { defineConfig, type TestProjectInlineConfiguration } from 'vitest/config';
import { webProjects } from './apps/web/vitest.config.ts';
import { testFilesByIsolation } from './scripts/vitest-isolation.ts';

const root = import.meta.dirname;
// Each package's sources, as the glob `packages/*/src` found them: a package without `src` has no tests.
const packages = readdirSync(`${root}/packages`, { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => `packages/${entry.name}/src`)
  .filter((dir) => existsSync(`${root}/${dir}`));

/**
 * The Node side's tests: the workspace packages from their sources (package.json `exports`, ADR 0056),
 * nothing to build first. Most files share one module graph per worker; those that replace modules or
 * load a Node.js SDK get their own (scripts/vitest-isolation.ts).
 */
function nodeProjects(): TestProjectInlineConfiguration[] {
  const { shared, isolated } = testFilesByIsolation(root, [
    'apps/server/src',
    'apps/dev-idp/src',
    ...packages,
    'scripts',
  ]);
  const project = (name: string, include: string[], isolate: boolean): TestProjectInlineConfiguration => ({
    ssr: { resolve: { conditions: ['@gatehouse/source', ...defaultServerConditions] } },
    resolve: { conditions: ['@gatehouse/source', ...defaultServerConditions] },
    test: {
      name,
      environment: 'node',
      include,
      isolate,
      setupFiles: ['./scripts/vitest-setup-node.ts'],
      unstubGlobals: true,
      unstubEnvs: true,
      testTimeout: 30_000,
      hookTimeout: 60_000,
    },
  });
  return [project('node', shared, false), project('node (isolated)', isolated, true)];
}

// One `vitest run` covers every workspace: Node packages run in Node, the SPA in jsdom.
export default defineConfig({
  test: {
    // One file more than there are cores: many files wait on a server, Redis or the disk more than they
    // compute (on two cores the default, cores - 1, ran one file at a time).
    maxWorkers: availableParallelism() + 1,
    projects: [...nodeProjects(), ...webProjects()],
  },
});

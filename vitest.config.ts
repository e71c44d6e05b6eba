import { availableParallelism } from 'node:os';
import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';
import { webProjects } from './apps/web/vitest.config.ts';

// One `vitest run` covers every workspace: Node packages run in Node, the SPA in jsdom.
export default defineConfig({
  test: {
    // One file more than there are cores: many files wait on a server, Redis or the disk more than they
    // compute (on two cores the default, cores - 1, ran one file at a time).
    maxWorkers: availableParallelism() + 1,
    projects: [
      {
        // The workspace packages from their sources (package.json `exports`, ADR 0056): nothing to build first.
        ssr: { resolve: { conditions: ['@gatehouse/source', ...defaultServerConditions] } },
        resolve: { conditions: ['@gatehouse/source', ...defaultServerConditions] },
        test: {
          name: 'node',
          environment: 'node',
          include: [
            'apps/server/src/**/*.test.ts',
            'apps/dev-idp/src/**/*.test.ts',
            'packages/*/src/**/*.test.ts',
            'scripts/**/*.test.ts',
          ],
          setupFiles: ['./scripts/vitest-setup-node.ts'],
          testTimeout: 30_000,
          hookTimeout: 60_000,
        },
      },
      ...webProjects(),
    ],
  },
});

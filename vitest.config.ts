import { defineConfig } from 'vitest/config';

// One `vitest run` covers every workspace: Node packages run in Node, the SPA in jsdom.
export default defineConfig({
  test: {
    projects: [
      {
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
      'apps/web/vitest.config.ts',
    ],
  },
});

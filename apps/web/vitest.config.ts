import { defaultClientConditions } from 'vite';
import { defineProject } from 'vitest/config';
import { pagesPlugin } from './pages-plugin.ts';

export default defineProject({
  plugins: [pagesPlugin()],
  resolve: { conditions: ['@gatehouse/source', ...defaultClientConditions] },
  test: {
    name: 'web',
    root: import.meta.dirname,
    environment: 'jsdom',
    include: ['src/**/*.test.{ts,tsx}'],
    setupFiles: ['./src/test-setup.ts'],
  },
});

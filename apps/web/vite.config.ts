import { defaultClientConditions, defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { compression } from 'vite-plugin-compression2';
import { firstRenderPlugin } from './first-render-plugin.ts';
import { pagesPlugin } from './pages-plugin.ts';

export default defineConfig({
  plugins: [
    // The route table, from each page's own `route` export (pages-plugin.ts).
    pagesPlugin(),
    react(),
    // index.html's first render, made by React from the app itself (first-render-plugin.ts).
    firstRenderPlugin(),
    // Brotli and gzip files beside each asset, made once at build time: the server sends them as they are.
    compression({ algorithms: ['brotliCompress', 'gzip'], exclude: [/\.(map|html)$/], threshold: 1024 }),
  ],
  // The workspace packages from their sources (package.json `exports`, ADR 0056): nothing to build first.
  resolve: { conditions: ['@gatehouse/source', ...defaultClientConditions] },
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    // Built for operators (to decode stacks), never linked from the code nor served (docs/decisions/0016).
    sourcemap: 'hidden',
    // The sign-in library and the telemetry SDK load after the first paint, in chunks of their own.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});

import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';

export default defineConfig({
  plugins: [react()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    sourcemap: true,
    // The sign-in library and the telemetry SDK load after the first paint, in chunks of their own.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});

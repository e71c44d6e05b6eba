import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import reactHooks from 'eslint-plugin-react-hooks';
import layers from './scripts/eslint-plugin-layers.mjs';
import globals from 'globals';
import { readdirSync } from 'node:fs';

// Every feature folder gets its own zone, so a new feature is isolated without editing this file.
const features = readdirSync(new URL('./apps/web/src/features/', import.meta.url), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);

/** Each collector folder and the folders above it (ADR 0110, 0115). */
const top = ['http', 'cli'];
const collectorLayers = [
  ['protocol', ['store', 'analytics', 'log-analytics', 'dashboard', 'relay', 'replicas', ...top]],
  ['store', ['analytics', 'log-analytics', 'dashboard', 'relay', 'replicas', ...top]],
  ['analytics', ['log-analytics', 'dashboard', 'relay', 'replicas', ...top]],
  ['log-analytics', ['dashboard', 'relay', 'replicas', ...top]],
  ['dashboard', ['relay', 'replicas', ...top]],
  ['relay', ['replicas', 'analytics', 'log-analytics', 'dashboard', ...top]],
  ['replicas', ['relay', ...top]],
];

export default tseslint.config(
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      'data/**',
      'test-results/**',
      'playwright-report/**',
      'bench/.out/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
      globals: { ...globals.node },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': ['error', { allow: ['warn', 'error', 'info'] }],
    },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    ...tseslint.configs.disableTypeChecked,
  },
  {
    // Benchmarks and scripts print their figures, and hand functions to the browser (page.evaluate).
    files: ['bench/**', 'scripts/**'],
    languageOptions: { globals: { ...globals.node, ...globals.browser } },
    rules: { 'no-console': 'off' },
  },
  // The SPA: browser globals, hooks rules, and one-way imports between its layers (shared -> features -> app).
  {
    files: ['apps/web/src/**/*.{ts,tsx}'],
    plugins: { 'react-hooks': reactHooks, layers },
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      ...reactHooks.configs.recommended.rules,
      'layers/no-cycle': 'error',
      'layers/restricted-paths': [
        'error',
        {
          zones: [
            ...features.map((feature) => ({
              target: `./apps/web/src/features/${feature}`,
              from: './apps/web/src/features',
              except: [`./${feature}`],
              message: 'A feature never imports another feature.',
            })),
            {
              target: [
                './apps/web/src/features',
                './apps/web/src/auth',
                './apps/web/src/telemetry',
                './apps/web/src/config',
              ],
              from: './apps/web/src/app',
              message: 'Only the app layer composes features; nothing imports it.',
            },
            {
              target: ['./apps/web/src/auth', './apps/web/src/telemetry', './apps/web/src/config'],
              from: './apps/web/src/features',
              message: 'Sign-in, telemetry and config serve every feature; they never import one.',
            },
            {
              target: './apps/web/src/shared',
              from: ['./apps/web/src/features', './apps/web/src/app'],
              message: 'shared/ is used by features, never the other way round.',
            },
            {
              target: './apps/web/src',
              from: ['./apps/server', './apps/dev-idp', './packages'],
              // The API's description is shared by both sides on purpose (types only in the SPA).
              except: ['./api-contract'],
              message: 'The SPA never imports server code.',
            },
          ],
        },
      ],
    },
  },
  // The collector: one-way imports between its folders, type imports included (ADR 0110). From the bottom:
  // protocol/ (what an item is) < store/ (DuckDB) < analytics/ (its queries) < log-analytics/ <
  // dashboard/ (the panels' registry) < relay/, replicas/ < http/ (the front that composes them), cli/.
  {
    files: ['packages/collector/src/**/*.ts'],
    // A test drives the whole collector through its front, wherever it sits.
    ignores: ['packages/collector/src/**/*.test.ts'],
    plugins: { layers },
    rules: {
      'layers/no-cycle': 'error',
      'layers/restricted-paths': [
        'error',
        {
          zones: collectorLayers.map(([folder, above]) => ({
            target: `./packages/collector/src/${folder}`,
            from: above.map((name) => `./packages/collector/src/${name}`),
            message: `${folder}/ is below ${above.join(', ')}: it never imports them (ADR 0110, 0115).`,
          })),
        },
      ],
    },
  },
  {
    files: ['apps/server/src/**', 'apps/dev-idp/src/**', 'packages/*/src/**'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['**/apps/web/**', '@gatehouse/web'], message: 'Server code never imports SPA code.' },
          ],
        },
      ],
    },
  },
);

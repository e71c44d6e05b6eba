import type { ESLint } from 'eslint';

declare const layers: ESLint.Plugin;
export default layers;

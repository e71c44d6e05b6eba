// `npm run bench`: every benchmark, one after the other, each printing its figures. The raw results
// are also written to bench/.out/results.json for comparison between runs.
import { mkdirSync, writeFileSync } from 'node:fs';
import { run as firstPaintAndSignIn } from './first-paint-and-sign-in.mjs';

const results = {
  machine: { cpus: (await import('node:os')).cpus().length, node: process.version },
  firstPaintAndSignIn: await firstPaintAndSignIn(),
};
mkdirSync(new URL('.out/', import.meta.url), { recursive: true });
writeFileSync(new URL('.out/results.json', import.meta.url), JSON.stringify(results, null, 2));
console.log('\nRaw results: bench/.out/results.json');

#!/usr/bin/env node
// The compiler that builds and type-checks Gatehouse: TypeScript 7, the native one (docs/decisions/0133).
// It is installed as `typescript-7` beside TypeScript 5.9, which stays `typescript` (and `tsc` on the path)
// for typescript-eslint, the one tool that needs 5.9's compiler API. Takes tsc's own arguments:
//   node scripts/tsc.mjs -p apps/server/tsconfig.build.json
import { createRequire } from 'node:module';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

// Its package exports no `bin/`: its `tsc` is found beside its package.json. It reads its arguments
// from process.argv after the script's name, which are this script's.
const typescript7 = path.dirname(createRequire(import.meta.url).resolve('typescript-7/package.json'));
await import(pathToFileURL(path.join(typescript7, 'bin', 'tsc')).href);

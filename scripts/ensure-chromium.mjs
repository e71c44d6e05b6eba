#!/usr/bin/env node
// The benchmarks' browser: Chromium, found or installed as for the tests (scripts/ensure-test-tools.mjs).
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

execFileSync(
  process.execPath,
  [fileURLToPath(new URL('./ensure-test-tools.mjs', import.meta.url)), 'chromium'],
  {
    stdio: 'inherit',
  },
);

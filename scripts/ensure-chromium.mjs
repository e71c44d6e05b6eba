#!/usr/bin/env node
// Browser tests and benchmarks use Debian's Chromium (Playwright may not download its own here).
// Installs it with apt-get when it is missing; CHROMIUM_PATH points elsewhere if you have one.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const path = process.env.CHROMIUM_PATH || '/usr/bin/chromium';
if (existsSync(path)) process.exit(0);

if (process.env.CHROMIUM_PATH) {
  console.error(`CHROMIUM_PATH is set to ${path}, but there is no file there.`);
  process.exit(1);
}
if (typeof process.getuid !== 'function' || process.getuid() !== 0) {
  console.error(
    'Chromium is needed for the browser tests: install it with `sudo apt-get install chromium`, or set CHROMIUM_PATH.',
  );
  process.exit(1);
}
console.info('Chromium is missing: installing Debian package "chromium" with apt-get…');
const run = (args) =>
  execFileSync('apt-get', args, {
    stdio: 'inherit',
    env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
  });
run(['update', '-qq']);
run(['install', '-y', '-qq', '--no-install-recommends', 'chromium', 'fonts-dejavu-core']);
if (!existsSync(path)) {
  console.error(`apt-get finished but ${path} is still missing.`);
  process.exit(1);
}

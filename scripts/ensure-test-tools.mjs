#!/usr/bin/env node
// The Debian programs the tests run besides Chromium (scripts/ensure-chromium.mjs): redis-server (the
// shared-state unit tests, the replicas' Redis) and haproxy (the load balancer of scripts/cluster.mjs).
// Installs the missing ones with apt-get when run as root. A tool that stays missing is an error under
// CI=true (a test must never be skipped there for want of it), else a warning naming the command.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

/** Each program the tests start, by the Debian package that installs it. */
export const TOOLS = [
  { program: '/usr/bin/redis-server', pkg: 'redis-server' },
  { program: '/usr/sbin/haproxy', pkg: 'haproxy' },
];

/** Installs what is missing (as root); returns the packages still missing. */
export function ensureTestTools(tools = TOOLS, log = console.info) {
  const missing = () => tools.filter(({ program }) => !existsSync(program)).map(({ pkg }) => pkg);
  const packages = missing();
  if (packages.length === 0) return [];
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return packages;
  log(`Installing Debian packages ${packages.join(', ')} with apt-get…`);
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  execFileSync('apt-get', ['update', '-qq'], { stdio: 'inherit', env });
  execFileSync('apt-get', ['install', '-y', '-qq', '--no-install-recommends', ...packages], {
    stdio: 'inherit',
    env,
  });
  return missing();
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const missing = ensureTestTools();
  if (missing.length > 0) {
    const message =
      `The tests need Debian packages ${missing.join(', ')}: install them with ` +
      `\`sudo apt-get install ${missing.join(' ')}\` (or run this script as root).`;
    if (process.env.CI) {
      console.error(message);
      process.exit(1);
    }
    console.warn(`${message} The tests that use them will fail until then.`);
  }
}

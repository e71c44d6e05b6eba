import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { stopLeftovers } from '../scripts/cluster.mjs';
import { port } from '../playwright.config';
import { SERVER_MARK } from './support';

/**
 * Before any spec, what an earlier run could not tear down (its worker killed) and which still holds
 * ports the specs use: a cluster (replicas.spec.ts), stopped by the pids it recorded, and servers a spec
 * started (support.ts `startServer`), found by the mark in their environment. Never another process.
 */
export default async function globalSetup() {
  const log = (line: string) => console.info(`Left by an earlier run: ${line}`);
  await stopLeftovers(port(0), log);
  stopLeftoverServers(log);
}

/** Servers of this run's ports that an earlier run left (Linux: read from /proc; elsewhere nothing). */
function stopLeftoverServers(log: (line: string) => void) {
  if (!existsSync('/proc/self/environ')) return;
  const mark = `${SERVER_MARK}=${port(0)}`;
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    let environment: string;
    try {
      environment = readFileSync(`/proc/${pid}/environ`, 'utf8');
    } catch {
      continue; // gone, or another user's
    }
    if (!environment.split('\0').includes(mark)) continue;
    try {
      process.kill(Number(pid), 'SIGKILL');
      log(`a test's server (pid ${pid}) stopped.`);
    } catch {
      // Gone in between.
    }
  }
}

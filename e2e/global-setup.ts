import { stopLeftovers } from '../scripts/cluster.mjs';
import { port } from '../playwright.config';

/**
 * Before any spec: a cluster an earlier run could not tear down (its worker killed, replicas.spec.ts) still
 * holds ports other specs use. Stops it by the pids it recorded, never another process.
 */
export default async function globalSetup() {
  await stopLeftovers(port(0), (line) => console.info(`Left by an earlier run: ${line}`));
}

import { expect, test } from '@playwright/test';
import { form, request as send, type CookieJar } from '../apps/dev-idp/src/test-support/oidc-flow';
import { startCluster, type Cluster } from '../scripts/cluster.mjs';
import { ACCOUNTS, bffSessionFor, clusterSpec } from './support';

/**
 * The BFF mode (OIDC_MODE=bff) on three replicas behind HAProxy, sessions in Redis (scripts/cluster.mjs):
 * a session started through the balancer is every replica's, a replica's restart signs no one out, and a
 * back-channel logout that reaches one replica ends the session on all of them.
 */
const PORT_BASE = Number(process.env.E2E_PORT_BASE ?? 4100);
let cluster: Cluster;

clusterSpec(
  async () => {
    cluster = await startCluster({ base: PORT_BASE, bff: true });
  },
  async () => {
    await cluster?.stop();
  },
);

/** Who replica `origin` (or the balancer) says the session of `headers` belongs to. */
async function userAt(origin: string, headers: Record<string, string>): Promise<string | null> {
  const response = await fetch(`${origin}/bff/user`, { headers });
  expect(response.status).toBe(200);
  return ((await response.json()) as { user: { sub: string } | null }).user?.sub ?? null;
}

/** The API's answer at replica `origin` for the session. */
async function meAt(origin: string, headers: Record<string, string>): Promise<number> {
  return (await fetch(`${origin}/api/me`, { headers })).status;
}

test('a session started through the balancer is served by every replica, and survives each one’s restart', async () => {
  const { headers } = await bffSessionFor(cluster.origin, ACCOUNTS.alice);
  for (const replica of cluster.replicas) {
    expect(await userAt(replica.origin, headers), replica.name).toBe('alice');
    expect(await meAt(replica.origin, headers), replica.name).toBe(200);
  }
  // A rolling restart: each replica stopped (SIGTERM) and started again, the session asked at it after.
  for (const [i, replica] of cluster.replicas.entries()) {
    expect(await cluster.stopReplica(i)).toBe(0);
    expect(await userAt(cluster.origin, headers)).toBe('alice');
    await cluster.startReplica(i);
    expect(await userAt(replica.origin, headers), `${replica.name} after its restart`).toBe('alice');
  }
});

test('a back-channel logout that reaches one replica ends the session on every replica', async () => {
  const { jar, headers } = await bffSessionFor(cluster.origin, ACCOUNTS.alice);
  const bob = await bffSessionFor(cluster.origin, ACCOUNTS.admin);
  // The user signs out at the provider's own page: it posts the logout token to PUBLIC_ORIGIN (the
  // balancer), which hands it to one replica.
  await signOutAtProvider(jar, cluster.idp);
  await expect.poll(() => userAt(cluster.origin, headers)).toBeNull();
  for (const replica of cluster.replicas) {
    expect(await userAt(replica.origin, headers), replica.name).toBeNull();
    expect(await meAt(replica.origin, headers), replica.name).toBe(401);
    expect(await userAt(replica.origin, bob.headers), `${replica.name}, another user`).toBe('admin');
  }
});

async function signOutAtProvider(jar: CookieJar, provider: string) {
  const page = await send(jar, `${provider}/session/end`);
  const xsrf = /name="xsrf" value="([^"]+)"/.exec(await page.text())?.[1];
  expect(xsrf).toBeTruthy();
  const confirmed = await send(
    jar,
    `${provider}/session/end/confirm`,
    form({ xsrf: String(xsrf), logout: 'yes' }),
  );
  expect(confirmed.status).toBe(303);
}

import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp } from './app.js';
import { loadConfig } from './config.js';
import { startTelemetryStore, type TelemetryStoreRole } from './telemetry-store.js';
import { TelemetryUserIds } from './telemetry-user-id.js';
import { startLoopbackProvider } from './test-support/loopback-provider.js';

// Two Gatehouse apps in this process, as two replicas: one holds the store, the other forwards to it.
const AUDIENCE = 'https://gatehouse.test/api';
const TOKEN = 'a-collector-token-of-at-least-32-characters';
const SECRET = 'a-user-id-secret-of-at-least-32-characters';
let dir: string;
let issuer: string;
let key: CryptoKey;
let closeProvider: () => Promise<void>;
const started: { server: Server; telemetry: TelemetryStoreRole }[] = [];

async function startReplica(env: Record<string, string>): Promise<string> {
  const config = loadConfig({
    OIDC_AUTHORITY: issuer,
    OIDC_CLIENT_ID: 'gatehouse',
    OIDC_AUDIENCE: AUDIENCE,
    TELEMETRY_USER_ID_SECRET: SECRET,
    COLLECTOR_TOKEN: TOKEN,
    ...env,
  });
  const telemetry = await startTelemetryStore(config, () => undefined);
  const app = createApp({
    config,
    authority: issuer,
    webRoot: pathToFileURL(`${dir}/`),
    collector: telemetry.collector,
    usage: telemetry.usage,
    dashboard: telemetry.dashboard,
    internalApi: telemetry.internalApi,
    telemetryUserIds: new TelemetryUserIds([SECRET]),
  });
  const server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  started.push({ server, telemetry });
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function stop(index: number): Promise<void> {
  const { server, telemetry } = started[index] as (typeof started)[number];
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await telemetry.collector.close();
}

let holder: string;
let replica: string;
beforeAll(async () => {
  ({ issuer, key, close: closeProvider } = await startLoopbackProvider());
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-replicas-'));
  await writeFile(
    join(dir, 'index.html'),
    '<html><head><script id="gatehouse-config" type="application/json">{}</script></head></html>',
  );
  holder = await startReplica({ GATEHOUSE_DATA_DIR: join(dir, 'holder') });
  replica = await startReplica({ COLLECTOR_URL: holder, GATEHOUSE_DATA_DIR: join(dir, 'replica') });
});
afterAll(async () => {
  for (let i = started.length - 1; i >= 0; i--) await stop(i).catch(() => undefined);
  await closeProvider();
  await rm(dir, { recursive: true, force: true });
});

const admin = async () => ({
  authorization: `Bearer ${await new SignJWT({ iss: issuer, aud: AUDIENCE, sub: 'admin', roles: ['admin'] })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key)}`,
});

const event = (user: string, name: string) => ({
  time: new Date().toISOString(),
  iKey: LOCAL_INSTRUMENTATION_KEY,
  name: 'Microsoft.ApplicationInsights.Event',
  tags: { 'ai.session.id': `session-${user}`, 'ai.user.id': user },
  data: { baseType: 'EventData', baseData: { ver: 2, name } },
});
const track = (base: string, envelopes: unknown[]) =>
  fetch(`${base}/v2/track`, { method: 'POST', body: JSON.stringify(envelopes) });

describe('a forwarding replica and the store holder', () => {
  it('stores what the replica accepted in the one store, and answers the dashboard from it', async () => {
    expect(started.map(({ telemetry }) => telemetry.role)).toEqual(['store holder', 'forwarding']);
    expect((await track(replica, [event('anon-r', 'from the replica')])).status).toBe(200);
    expect((await track(holder, [event('anon-h', 'from the holder')])).status).toBe(200);
    for (const base of [holder, replica]) {
      const res = await fetch(`${base}/api/usage/events?range=1h`, { headers: await admin() });
      expect(res.status).toBe(200);
      const { events } = (await res.json()) as { events: { name: string; count: number }[] };
      expect(events.map((e) => e.name).sort()).toEqual(['from the holder', 'from the replica']);
    }
  });

  it("exports and erases one user's items from the replica", async () => {
    expect((await track(replica, [event('leaver', 'one'), event('leaver', 'two')])).status).toBe(200);
    const path = `${replica}/api/usage/users/leaver`;
    const exported = await fetch(`${path}/export`, { headers: await admin() });
    expect(exported.status).toBe(200);
    const lines = (await exported.text()).trimEnd().split('\n');
    expect(
      lines.map((line) => (JSON.parse(line) as { data: { baseData: { name: string } } }).data.baseData.name),
    ).toEqual(['one', 'two']);
    const erased = await fetch(path, { method: 'DELETE', headers: await admin() });
    expect(await erased.json()).toEqual({ erased: 2 });
    expect(await (await fetch(`${path}/export`, { headers: await admin() })).text()).toBe('');
  });

  it('keeps the internal API behind the token, out of the replicas and out of the OpenAPI document', async () => {
    for (const authorization of [undefined, (await admin()).authorization, 'Bearer not-the-token']) {
      const res = await fetch(`${holder}/internal/collector/ping`, {
        headers: authorization ? { authorization } : {},
      });
      expect(res.status).toBe(401);
    }
    const ping = await fetch(`${holder}/internal/collector/ping`, {
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    expect(ping.status).toBe(204);
    expect(ping.headers.get('cache-control')).toBe('no-store');
    // A replica serves no internal API, even to the token.
    const onReplica = await fetch(`${replica}/internal/collector/ping`, {
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' },
    });
    expect(onReplica.status).toBe(404);
    const openapi = JSON.stringify(await (await fetch(`${holder}/api/openapi.json`)).json());
    expect(openapi).not.toContain('/internal');
    expect(await started[1]?.telemetry.ready()).toBe(true);
  });

  it('answers 503 (store_unavailable, Retry-After) while the store holder is away', async () => {
    await stop(0);
    // Still ready: sign-in and the API do not need the store holder (it was reached once).
    expect(await started[1]?.telemetry.ready()).toBe(true);
    const res = await fetch(`${replica}/api/usage/overview?range=1h`, { headers: await admin() });
    expect(res.status).toBe(503);
    expect(res.headers.get('retry-after')).toBe('5');
    expect(await res.json()).toMatchObject({ error: 'store_unavailable' });
    const tracked = await track(replica, [event('anon-r', 'while away')]);
    expect(tracked.status).toBe(503); // after waiting 5 s for the store holder to come back
    expect(tracked.headers.get('retry-after')).toBe('10');
  });
});

import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { createCollector, type Collector } from '@gatehouse/collector';
import type { Express } from 'express';
import { SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, type AppOptions } from './app.js';
import { loadConfig } from './config.js';
import { TelemetryUserIds } from './telemetry-user-id.js';
import { startLoopbackProvider } from './test-support/loopback-provider.js';
import { apiRoutes, asDescribed, asErrorBody } from './test-support/contract.js';

// The app with a real collector store in a temp dir, tokens signed by a loopback provider stand-in.
const AUDIENCE = 'https://gatehouse.test/api';
const userIds = new TelemetryUserIds(['another-secret-of-at-least-thirty-two-chars']);
let provider: Awaited<ReturnType<typeof startLoopbackProvider>>;
let key: CryptoKey;
let dir: string;
let collector: Collector;
const servers: Server[] = [];
let app: Express;
let base: string;
let azureBase: string;

async function serve(options: Partial<AppOptions>): Promise<{ app: Express; base: string }> {
  const config = loadConfig({
    OIDC_AUTHORITY: provider.issuer,
    OIDC_CLIENT_ID: 'gatehouse',
    OIDC_AUDIENCE: AUDIENCE,
    OIDC_ROLES_CLAIM: 'realm_access.roles',
  });
  const served = createApp({
    config,
    authority: provider.issuer,
    webRoot: pathToFileURL(`${dir}/`),
    telemetryUserIds: userIds,
    ...options,
  });
  const server = served.listen(0, '127.0.0.1');
  servers.push(server);
  await new Promise((resolve) => server.once('listening', resolve));
  return { app: served, base: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

beforeAll(async () => {
  provider = await startLoopbackProvider();
  key = provider.key;
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-annotations-'));
  await writeFile(join(dir, 'index.html'), '<html><head></head></html>');
  collector = await createCollector({
    dataDir: join(dir, 'data'),
    instrumentationKeys: ['8c0c7b2f-4a4e-4c1e-9d7a-0f5b8d6e3a21'],
    allowedOrigins: [],
    retentionDays: 0,
  });
  ({ app, base } = await serve({
    collector,
    usage: collector.usage,
    dashboard: collector.dashboard,
    annotations: collector.annotations,
  }));
  // The figures from Azure Monitor, and no store of Gatehouse's own (the relay without a local copy).
  ({ base: azureBase } = await serve({
    usage: collector.usage,
    usageSource: {
      kind: 'log-analytics',
      freshness: () => Promise.resolve({ latestItem: null, ingestionDelayMs: null }),
    },
  }));
});

afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  await provider.close();
  await collector.close();
  await rm(dir, { recursive: true, force: true });
});

const token = (sub: string, roles: string[]) =>
  new SignJWT({ iss: provider.issuer, aud: AUDIENCE, sub, realm_access: { roles } })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
    .setIssuedAt()
    .setExpirationTime('5m')
    .sign(key);

async function call(
  method: string,
  path: string,
  { as, body, at = base }: { as?: [sub: string, roles: string[]]; body?: unknown; at?: string } = {},
) {
  const headers: Record<string, string> = {};
  if (as) headers.authorization = `Bearer ${await token(...as)}`;
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(`${at}${path}`, {
    method,
    headers,
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await response.text();
  const json = response.headers.get('content-type')?.startsWith('application/json');
  return { status: response.status, text, body: (json ? JSON.parse(text) : null) as unknown };
}

const ADA: [string, string[]] = ['ada', ['admin']];
const BOB: [string, string[]] = ['bob', ['admin']];
const MEMBER: [string, string[]] = ['mallory', ['member']];
const adaId = () => userIds.idFor(provider.issuer, 'ada');

describe('annotations through the API', () => {
  it('an admin marks a moment; every admin sees it on the period, the author from the token', async () => {
    const time = new Date(Date.now() - 30 * 60_000).toISOString();
    const created = await call('POST', '/api/usage/annotations', {
      as: ADA,
      body: { time, note: '  Release 2.4 <b>bold</b>  ' },
    });
    expect(created.status).toBe(200);
    const annotation = asDescribed('createAnnotation', created.body);
    expect(annotation).toMatchObject({ time, note: 'Release 2.4 <b>bold</b>', author: adaId(), mine: true });

    const seenByBob = await call('GET', '/api/usage/annotations?range=1h', { as: BOB });
    expect(seenByBob.status).toBe(200);
    expect(asDescribed('annotations', seenByBob.body).annotations).toEqual([{ ...annotation, mine: false }]);
    // Outside the period, nothing; a custom period holding it, it.
    const past = await call(
      'GET',
      '/api/usage/annotations?from=2026-01-01T00:00:00Z&to=2026-01-02T00:00:00Z',
      {
        as: ADA,
      },
    );
    expect(asDescribed('annotations', past.body).annotations).toEqual([]);

    expect((await call('DELETE', `/api/usage/annotations/${annotation.id}`, { as: BOB })).body).toEqual({
      deleted: annotation.id,
    });
    const again = await call('DELETE', `/api/usage/annotations/${annotation.id}`, { as: BOB });
    expect(again.status).toBe(404);
    expect(asErrorBody(again.body).message).toBe('There is no annotation with this id.');
  });

  it('refuses anyone but an admin: 401 without a token, 403 for a member; nothing is written', async () => {
    const time = new Date().toISOString();
    for (const [method, path, body] of [
      ['GET', '/api/usage/annotations', undefined],
      ['POST', '/api/usage/annotations', { time, note: 'Not mine to write' }],
      ['DELETE', '/api/usage/annotations/5f0c6b1e-8a3b-4c1d-9e2f-0a1b2c3d4e5f', undefined],
    ] as const) {
      expect((await call(method, path, { body })).status).toBe(401);
      const member = await call(method, path, { as: MEMBER, body });
      expect(member.status).toBe(403);
      expect(asErrorBody(member.body).error).toBe('forbidden');
    }
    const listed = await call('GET', '/api/usage/annotations?range=1h', { as: ADA });
    expect(asDescribed('annotations', listed.body).annotations).toEqual([]);
  });

  it('400 names what is wrong: a note too long, empty or of several lines, a bad time, an author given', async () => {
    const time = new Date().toISOString();
    const refused = async (body: unknown) => {
      const answer = await call('POST', '/api/usage/annotations', { as: ADA, body });
      expect(answer.status).toBe(400);
      return asErrorBody(answer.body).message;
    };
    expect(await refused({ time, note: 'x'.repeat(201) })).toBe('note must be at most 200 characters.');
    expect(await refused({ time, note: '   ' })).toBe('note must not be empty.');
    expect(await refused({ time, note: 'one\ntwo' })).toBe('note must be one line of text.');
    expect(await refused({ time: 'yesterday', note: 'ok' })).toBe('time must be an ISO 8601 time.');
    expect(await refused({ time, note: 'ok', author: 'someone-else' })).toMatch(/^author /);
    expect(await refused(undefined)).toMatch(/request|time/);
    const id = await call('DELETE', '/api/usage/annotations/1%20OR%201=1', { as: ADA });
    expect(id.status).toBe(400);
    // 200 characters is within the bound.
    expect(
      (await call('POST', '/api/usage/annotations', { as: ADA, body: { time, note: 'y'.repeat(200) } }))
        .status,
    ).toBe(200);
  });

  it("puts an admin's own annotations in their export, never in another's; erasure keeps the note", async () => {
    const time = new Date().toISOString();
    const ada = asDescribed(
      'createAnnotation',
      (
        await call('POST', '/api/usage/annotations', {
          as: ADA,
          body: { time, note: 'Incident: sign-in slow' },
        })
      ).body,
    );
    await call('POST', '/api/usage/annotations', { as: BOB, body: { time, note: "Bob's release" } });

    const exported = await call('GET', `/api/usage/users/${adaId()}/export`, { as: BOB });
    expect(exported.status).toBe(200);
    const lines = exported.text
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line) as unknown);
    const { id, note, createdAt } = ada;
    const annotations = lines.filter((line) => Object.hasOwn(line as object, 'annotation'));
    expect(annotations).toContainEqual({ annotation: { id, time, note, createdAt } });
    expect(JSON.stringify(annotations)).not.toContain("Bob's release");
    expect(annotations).toHaveLength(2); // And the 200-character one above.
    const others = await call('GET', `/api/usage/users/${userIds.idFor(provider.issuer, 'nobody')}/export`, {
      as: BOB,
    });
    expect(others.text).toBe('');

    expect((await call('DELETE', `/api/usage/users/${adaId()}`, { as: BOB })).status).toBe(200);
    const after = asDescribed(
      'annotations',
      (await call('GET', '/api/usage/annotations?range=1h', { as: BOB })).body,
    );
    expect(after.annotations.find((a) => a.id === ada.id)).toMatchObject({ note, author: null, mine: false });
    expect(after.annotations.find((a) => a.note === "Bob's release")).toMatchObject({ mine: true });
    expect((await call('GET', `/api/usage/users/${adaId()}/export`, { as: BOB })).text).toBe('');
  });

  it('answers 501 with the reason where the figures come from Azure Monitor and no store is kept', async () => {
    const answer = await call('GET', '/api/usage/annotations', { as: ADA, at: azureBase });
    expect(answer.status).toBe(501);
    expect(asErrorBody(answer.body)).toMatchObject({ error: 'not_available' });
    expect(asErrorBody(answer.body).message).toMatch(/TELEMETRY_RELAY_LOCAL_COPY/);
  });

  it('routes what the OpenAPI document describes', () => {
    expect(apiRoutes(app)).toEqual(
      expect.arrayContaining([
        'get /usage/annotations',
        'post /usage/annotations',
        'delete /usage/annotations/{id}',
      ]),
    );
  });
});

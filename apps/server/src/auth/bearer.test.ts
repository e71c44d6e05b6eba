import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import { generateKeyPair, SignJWT, type CryptoKey } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTokenVerifier, readRoles, requireBearer } from './bearer.js';
import { startLoopbackProvider } from '../test-support/loopback-provider.js';
import { ProviderMetadataCache } from './provider-metadata.js';

// A real provider stand-in on loopback: discovery and JWKS over HTTP, keys made here.
let closeProvider: () => Promise<void>;
let api: Server;
let issuer: string;
let apiUrl: string;
let key: CryptoKey;
let otherKey: CryptoKey;
const AUDIENCE = 'https://gatehouse.test/api';

beforeAll(async () => {
  const provider = await startLoopbackProvider();
  ({ issuer, key } = provider);
  closeProvider = provider.close;
  ({ privateKey: otherKey } = await generateKeyPair('RS256'));

  const verify = createTokenVerifier({
    issuer,
    audience: AUDIENCE,
    rolesClaim: 'roles',
    metadata: new ProviderMetadataCache(issuer),
  });
  const app = express();
  app.get('/me', requireBearer(verify), (_req, res) => res.json(res.locals.user));
  app.get('/admin', requireBearer(verify, 'admin'), (_req, res) => res.json({ ok: true }));
  api = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => api.once('listening', resolve));
  apiUrl = `http://127.0.0.1:${(api.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await closeProvider();
  await new Promise((resolve) => api.close(resolve));
});

async function token(
  claims: Record<string, unknown> = {},
  options: { signWith?: CryptoKey; expiresIn?: string | number } = {},
) {
  return new SignJWT({ iss: issuer, aud: AUDIENCE, sub: 'alice', roles: ['member'], ...claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1', typ: 'at+jwt' })
    .setIssuedAt()
    .setExpirationTime(options.expiresIn ?? '5m')
    .sign(options.signWith ?? key);
}

async function call(path: string, authorization?: string) {
  const response = await fetch(`${apiUrl}${path}`, { headers: authorization ? { authorization } : {} });
  return {
    status: response.status,
    challenge: response.headers.get('www-authenticate'),
    body: (await response.json()) as Record<string, unknown>,
  };
}

describe('requireBearer', () => {
  it('accepts a valid token and hands the handler who called', async () => {
    const result = await call('/me', `Bearer ${await token({ name: 'Alice' })}`);
    expect(result.status).toBe(200);
    expect(result.body).toMatchObject({ sub: 'alice', name: 'Alice', roles: ['member'], issuer });
  });

  it('challenges a request without a token (RFC 6750 3.1: no error code)', async () => {
    const result = await call('/me');
    expect(result.status).toBe(401);
    expect(result.challenge).toBe('Bearer realm="gatehouse"');
  });

  it.each([
    ['a malformed header', () => Promise.resolve('Basic abc')],
    ['a token that is not a JWT', () => Promise.resolve('Bearer abc.def')],
    [
      'an expired token',
      async () => `Bearer ${await token({}, { expiresIn: Math.floor(Date.now() / 1000) - 10 })}`,
    ],
    ['a token for another audience', async () => `Bearer ${await token({ aud: 'someone-else' })}`],
    ['a token from another issuer', async () => `Bearer ${await token({ iss: 'https://evil.example' })}`],
    ['a token signed by another key', async () => `Bearer ${await token({}, { signWith: otherKey })}`],
  ])('refuses %s with invalid_token', async (_what, header) => {
    const result = await call('/me', await header());
    expect(result.status).toBe(401);
    expect(result.challenge).toMatch(
      /^Bearer realm="gatehouse", error="invalid_token", error_description="[^"]+"$/,
    );
    expect(result.body.error).toBe('invalid_token');
  });

  it('says which check failed', async () => {
    const expired = await call(
      '/me',
      `Bearer ${await token({}, { expiresIn: Math.floor(Date.now() / 1000) - 10 })}`,
    );
    expect(expired.challenge).toContain('expired');
    const audience = await call('/me', `Bearer ${await token({ aud: 'someone-else' })}`);
    expect(audience.challenge).toContain('another audience');
  });

  it('answers 403 when the role is missing, and lets the role in', async () => {
    expect((await call('/admin', `Bearer ${await token()}`)).status).toBe(403);
    expect((await call('/admin', `Bearer ${await token({ roles: ['admin'] })}`)).status).toBe(200);
  });
});

describe('readRoles', () => {
  it('reads a top-level claim, a dotted path, or a single string', () => {
    expect(readRoles({ roles: ['a', 'b', 3] }, 'roles')).toEqual(['a', 'b']);
    expect(readRoles({ realm_access: { roles: ['admin'] } }, 'realm_access.roles')).toEqual(['admin']);
    expect(readRoles({ 'https://example.com/roles': ['x'] }, 'https://example.com/roles')).toEqual(['x']);
    expect(readRoles({ role: 'admin' }, 'role')).toEqual(['admin']);
    expect(readRoles({}, 'roles')).toEqual([]);
  });
});

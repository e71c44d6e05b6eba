import type { AddressInfo } from 'node:net';
import express from 'express';
import * as client from 'openid-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '../log.js';
import { Bff } from './bff.js';
import { SessionStore, type StoreBackend } from './session-store.js';

/** A store that cannot be reached, as Redis while it is away. */
const away = (): Promise<never> => Promise.reject(new Error('connect ECONNREFUSED 127.0.0.1:6379'));
const unreachable: StoreBackend = {
  get: away,
  take: away,
  set: away,
  delete: away,
  deleteIndexed: away,
  exclusive: away,
};

describe('the BFF while its session store is away', () => {
  let origin = '';
  let close = () => {};
  beforeAll(async () => {
    const configuration = new client.Configuration(
      { issuer: 'https://idp.example', authorization_endpoint: 'https://idp.example/auth' },
      'app',
      'secret',
    );
    const bff = new Bff({
      oauth: { configuration: () => Promise.resolve(configuration) },
      store: new SessionStore(unreachable),
      issuer: 'https://idp.example',
      publicOrigin: 'http://localhost:3000',
      scope: 'openid',
      rolesClaim: 'roles',
      extraQueryParams: {},
      idleMs: 60_000,
      maxMs: 3_600_000,
      logger: silentLogger,
    });
    const app = express();
    app.use('/bff', bff.router());
    app.use('/api', bff.apiSession, (_req, res) => res.json({ reached: true }));
    const server = app.listen(0);
    await new Promise((resolve) => server.once('listening', resolve));
    origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    close = () => server.close();
  });
  afterAll(() => close());

  const cookie = { Cookie: 'gatehouse-session=someone', 'X-CSRF': '1' };

  it('sends a sign-in back to the app with "try again shortly", not to an error page', async () => {
    for (const path of ['/bff/login', '/bff/callback?code=c&state=s']) {
      const response = await fetch(`${origin}${path}`, {
        redirect: 'manual',
        headers: { Cookie: 'gatehouse-login=binder' },
      });
      expect(response.status, path).toBe(303);
      const location = new URL(response.headers.get('location') ?? '', origin);
      expect(location.pathname, path).toBe('/callback');
      expect(location.searchParams.get('error'), path).toBe('temporarily_unavailable');
    }
  });

  it('answers cookie-authenticated calls 503 with Retry-After, never as if signed out', async () => {
    for (const [path, method] of [
      ['/bff/user', 'GET'],
      ['/bff/logout', 'POST'],
      ['/api/me', 'GET'],
    ] as const) {
      const response = await fetch(`${origin}${path}`, { method, headers: cookie });
      expect(response.status, path).toBe(503);
      expect(response.headers.get('retry-after'), path).toBe('2');
    }
  });
});

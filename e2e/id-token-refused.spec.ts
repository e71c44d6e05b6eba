import { expect, test } from '@playwright/test';
import { port } from '../playwright.config';
import { ACCOUNTS, apiFromPage, sessionTokens, signIn, startServer, type StartedServer } from './support';

/**
 * With the API's audience equal to the client id (the Entra example; any provider without
 * OIDC_AUDIENCE), the ID token of a sign-in passes the signature, issuer, audience and expiry checks.
 * The API must still refuse it, on /api/me and on the admin API.
 */
let server: StartedServer;

test.beforeAll(async () => {
  // The bundled provider wants an absolute URI as the resource: the client id is one here.
  const audience = `http://localhost:${port(28)}/api`;
  server = await startServer(28, {
    OIDC_CLIENT_ID: audience,
    OIDC_AUDIENCE: audience,
    TELEMETRY_CONSENT: 'implied',
  });
});

test.afterAll(async () => {
  await server.stop();
});

test('an ID token with the API audience is refused where the access token is accepted', async ({
  page,
  request,
}) => {
  await page.goto(`${server.origin}/`);
  await signIn(page, ACCOUNTS.admin, server.provider);
  const { access_token, id_token } = await sessionTokens(page);

  const accepted = await apiFromPage(page, '/api/me', access_token);
  expect(accepted.status).toBe(200);
  expect(accepted.body).toMatchObject({ sub: 'admin', verifiedBy: 'jwt' });

  for (const path of ['/api/me', '/api/usage/overview']) {
    const refused = await request.get(`${server.origin}${path}`, {
      headers: { authorization: `Bearer ${id_token}` },
    });
    expect(refused.status(), path).toBe(401);
    expect(refused.headers()['www-authenticate']).toContain('is an ID token');
  }
});

import { expect, test } from '@playwright/test';
import { ACCOUNTS, sessionTokens, signIn, startServer, type StartedServer } from './support';

/**
 * The bundled provider in its opaque-token mode (DEV_IDP_ACCESS_TOKEN_FORMAT=opaque), as Django OAuth
 * Toolkit, Auth0 without an audience or Okta's org server issue them: the API checks the token by asking
 * the provider, through userinfo, or through introspection when it has credentials for it.
 */
const MODES = [
  { verifiedBy: 'userinfo', offset: 116, env: {} },
  {
    verifiedBy: 'introspection',
    offset: 118,
    env: { OIDC_INTROSPECTION_CLIENT_ID: 'gatehouse-api', OIDC_INTROSPECTION_CLIENT_SECRET: 'e2e-secret' },
  },
] as const;

for (const mode of MODES) {
  test.describe(`opaque access tokens, checked through ${mode.verifiedBy}`, () => {
    let server: StartedServer;
    test.beforeAll(async () => {
      // As the providers that issue opaque tokens by default do (Django OAuth Toolkit, Auth0 without an
      // audience): no DPoP, so the API may ask userinfo about a token (a bound one it could not).
      server = await startServer(mode.offset, {
        DEV_IDP_ACCESS_TOKEN_FORMAT: 'opaque',
        DEV_IDP_DPOP: 'off',
        ...mode.env,
      });
    });
    test.afterAll(async () => {
      await server?.stop();
    });

    test('sign in, and /api/me answers who the user is', async ({ page, request }) => {
      await page.goto(`${server.origin}/`);
      await signIn(page, ACCOUNTS.admin, server.provider);
      const { access_token } = await sessionTokens(page);
      expect(access_token).toBeDefined();
      expect(access_token!.split('.')).toHaveLength(1);

      await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
      await expect(page.getByTestId('profile-email')).toHaveText(ACCOUNTS.admin.email);
      const answer = JSON.parse((await page.getByTestId('api-me').textContent()) ?? '{}') as Record<
        string,
        unknown
      >;
      expect(answer).toMatchObject({
        sub: 'admin',
        name: ACCOUNTS.admin.name,
        email: ACCOUNTS.admin.email,
        issuer: server.provider,
        verifiedBy: mode.verifiedBy,
      });
      expect(answer.roles).toContain('admin');

      // A token the provider never issued is refused, with the provider's verdict as the reason.
      const forged = await request.get(`${server.origin}/api/me`, {
        headers: { authorization: `Bearer ${access_token!.slice(0, -2)}xx` },
      });
      expect(forged.status()).toBe(401);
      expect(forged.headers()['www-authenticate']).toContain('error="invalid_token"');
    });
  });
}

import { expect, test } from '@playwright/test';
import { ACCOUNTS, apiFromPage, signIn, startServer, type StartedServer } from './support';

/**
 * Roles where Keycloak puts them (`realm_access.roles`, nested in the tokens): the bundled provider plays
 * Keycloak (DEV_IDP_ROLES_CLAIM), and Gatehouse is configured as docs/providers.md says for Keycloak. The SPA
 * and the API read the roles with the same function, so an admin gets the admin pages and their data.
 */
let keycloakLike: StartedServer;

test.beforeAll(async () => {
  keycloakLike = await startServer(36, {
    OIDC_ROLES_CLAIM: 'realm_access.roles',
    DEV_IDP_ROLES_CLAIM: 'realm_access.roles',
    TELEMETRY_CONSENT: 'implied',
  });
});

test.afterAll(async () => {
  await keycloakLike.stop();
});

test('an admin whose roles are in realm_access.roles sees the admin links and the dashboard', async ({
  page,
}) => {
  await page.goto(keycloakLike.origin);
  await signIn(page, ACCOUNTS.admin, keycloakLike.provider);

  const navigation = page.getByRole('navigation');
  await expect(navigation.getByRole('link', { name: 'Diagnostics' })).toBeVisible();
  await navigation.getByRole('link', { name: 'Usage' }).click();
  await expect(page.getByRole('heading', { name: 'Usage', level: 1 })).toBeVisible();
  await expect(page.getByTestId('tile-users').locator('.tile-value')).toHaveText(/^\d+$/);
  await expect(page.getByText(/no access|not allowed/i)).toHaveCount(0);
  // The API found the same roles in the access token.
  const me = await apiFromPage(page, '/api/me');
  expect(me.status).toBe(200);
  expect(me.body).toMatchObject({ roles: ['admin', 'member'] });
});

test('a member whose roles are in realm_access.roles gets no admin link', async ({ page }) => {
  await page.goto(keycloakLike.origin);
  await signIn(page, ACCOUNTS.alice, keycloakLike.provider);
  const navigation = page.getByRole('navigation');
  await expect(navigation.getByRole('link', { name: 'Profile' })).toBeVisible();
  await expect(navigation.getByRole('link', { name: 'Usage' })).toHaveCount(0);
  await expect(navigation.getByRole('link', { name: 'Diagnostics' })).toHaveCount(0);
});

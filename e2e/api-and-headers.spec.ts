import { expect } from '@playwright/test';
import { APP, IDP } from '../playwright.config';
import { expectRefusedOnceExpired, misbehave, sessionTokens, signIn, test } from './support';

test('the API refuses a missing or malformed token with bearer and DPoP challenges', async ({ request }) => {
  const missing = await request.get('/api/me');
  expect(missing.status()).toBe(401);
  // RFC 6750 3.1 and RFC 9449 7.1: both schemes offered, no error code, DPoP with its algorithms.
  expect(missing.headers()['www-authenticate']).toBe(
    'Bearer realm="gatehouse", DPoP realm="gatehouse", algs="ES256 ES384 PS256 RS256 EdDSA"',
  );

  const malformed = await request.get('/api/me', { headers: { Authorization: 'Bearer not-a-jwt' } });
  expect(malformed.status()).toBe(401);
  expect(malformed.headers()['www-authenticate']).toContain('error="invalid_token"');
});

test('the API refuses a token for another audience and an expired token', async ({ page, request }) => {
  await misbehave(request, null, { accessTokenTtlSeconds: 2 });
  await page.goto('/');
  await signIn(page);
  const session = await sessionTokens(page);
  // A page of the same origin without the app: nothing renews meanwhile, and the browser's key stays at hand.
  await page.goto('/api/openapi.json');

  // The ID token is a real, signed token of the same provider, but for the client, not the API.
  const wrongAudience = await request.get('/api/me', {
    headers: { Authorization: `Bearer ${session.id_token ?? ''}` },
  });
  expect(wrongAudience.status()).toBe(401);
  // It names the audience it got and the one it wanted, in the challenge and in the message.
  const named = `it is for 'gatehouse', this API accepts '${APP}/api'`;
  expect(wrongAudience.headers()['www-authenticate']).toContain(named);
  expect(((await wrongAudience.json()) as { message: string }).message).toContain(named);

  await expectRefusedOnceExpired(page, '/api/me', session.access_token ?? '');
  await misbehave(request, null, { accessTokenTtlSeconds: 300 });
});

test('pages carry a strict Content-Security-Policy and the other security headers', async ({ request }) => {
  const response = await request.get('/');
  const headers = response.headers();
  const csp = headers['content-security-policy'] ?? '';
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  expect(csp).toContain("frame-ancestors 'none'");
  expect(csp).toMatch(new RegExp(`connect-src 'self' ${IDP}(;|$| )`));
  expect(headers['referrer-policy']).toBe('no-referrer');
  expect(headers['x-content-type-options']).toBe('nosniff');
  expect(headers['strict-transport-security']).toBeUndefined(); // plain http: HSTS only over https
  const html = await response.text();
  expect(html).toContain('<script id="gatehouse-config" type="application/json">{"oidc":');
});

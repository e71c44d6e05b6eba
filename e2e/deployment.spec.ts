import { expect, test } from '@playwright/test';
import { APP, IDP } from '../playwright.config';
import { startServer } from './support';

test('a production start without a provider is refused, with one message saying why', async () => {
  const start = startServer(80, { NODE_ENV: 'production', ALLOW_BUNDLED_DEV_IDP: '' }, 20_000);
  await expect(start).rejects.toThrow(/exited with 1/);
  await expect(start).rejects.toThrow(/OIDC_AUTHORITY: is required when NODE_ENV=production/);
  await expect(start).rejects.toThrow(/ALLOW_BUNDLED_DEV_IDP=1/);
});

test("the provider's test controls refuse a request without their secret or not in JSON", async ({
  request,
}) => {
  // What any page on any origin can send without a CORS preflight.
  const fromElsewhere = await request.post(`${IDP}/__test/misbehave`, {
    headers: { 'Content-Type': 'text/plain', Origin: 'https://evil.example' },
    data: JSON.stringify({ mode: 'wrong-issuer' }),
  });
  expect(fromElsewhere.status()).toBe(403);
  const guessed = await request.get(`${IDP}/__test/misbehave`, {
    headers: { 'X-Test-Controls-Secret': 'guessed-guessed-guessed' },
  });
  expect(guessed.status()).toBe(403);
});

test('headers: Permissions-Policy, no-store on API errors, no raw index.html, missing assets are 404', async ({
  request,
}) => {
  const page = await request.get('/');
  expect(page.headers()['permissions-policy']).toContain('camera=()');
  for (const path of ['/api/me', '/api/nothing']) {
    const response = await request.get(path);
    expect([401, 404]).toContain(response.status());
    expect(response.headers()['cache-control']).toBe('no-store');
  }
  const raw = await request.get('/index.html', { maxRedirects: 0 });
  expect(raw.status()).toBe(301);
  expect(raw.headers()['location']).toBe('/');

  const html = await page.text();
  const script = /<script type="module" crossorigin src="(\/assets\/[^"]+\.js)"/.exec(html)?.[1];
  expect(script).toBeTruthy();
  const asset = await request.get(`${APP}${script}`);
  expect(asset.status()).toBe(200);
  expect(await asset.text()).not.toContain('sourceMappingURL');
  expect((await request.get(`${APP}${script}.map`)).status()).toBe(404);
  const missing = await request.get('/assets/missing-0123abcd.js', { headers: { accept: '*/*' } });
  expect(missing.status()).toBe(404);
  expect(await missing.text()).not.toContain('gatehouse-config');
});

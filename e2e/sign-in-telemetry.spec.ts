import { expect, test } from '@playwright/test';
import { APP, IDP } from '../playwright.config';
import { ACCOUNTS, misbehave, sessionTokens, signIn } from './support';
import {
  acceptUsageData,
  expectNoSecretsPosted,
  hidePage,
  recordTelemetry,
  waitForSdk,
  type Envelope,
} from './telemetry-support';

/**
 * Sign-in health, end to end: the journey's events reach the collector through the SDK, with codes and
 * a duration only; the identity provider never shows as where a visit came from (docs/decisions/0104,
 * 0106).
 */
test.beforeEach(async ({ request }) => {
  await misbehave(request, null, { accessTokenTtlSeconds: 300 });
});

test.afterEach(async ({ page }) => {
  await page.unrouteAll({ behavior: 'ignoreErrors' });
});

const signInEvents = (envelopes: Envelope[]) =>
  envelopes.filter((e) => e.data.baseType === 'EventData' && e.data.baseData.name === 'gatehouse.sign-in');
const propertiesOf = (e: Envelope) => (e.data.baseData.properties ?? {}) as Record<string, string>;

test('a sign-in is reported step by step, with its duration, and the provider is never a referrer', async ({
  page,
}) => {
  const telemetry = await recordTelemetry(page);
  const callbackRequest = page.waitForRequest((request) => request.url().startsWith(`${APP}/callback?`));
  await page.goto('/');
  await acceptUsageData(page);
  // The SDK is there before the click, so `started` is sent before the browser leaves.
  await waitForSdk(page);
  await signIn(page, ACCOUNTS.alice);
  const callback = new URL((await callbackRequest).url());
  const tokens = await sessionTokens(page);
  await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
  await expect(page.getByRole('heading', { name: 'Profile' })).toBeVisible();
  await hidePage(page);

  // Each step once (a copy the SDK sends again from its buffer across the redirect is stored once).
  await expect
    .poll(() => [...new Set(signInEvents(telemetry.envelopes()).map((e) => propertiesOf(e).outcome))].sort())
    .toEqual(['redeemed', 'returned', 'signed-in', 'started']);
  const events = signInEvents(telemetry.envelopes());
  for (const event of events) expect(propertiesOf(event).trigger).toBe('button');
  const signedIn = events.find((e) => propertiesOf(e).outcome === 'signed-in');
  const measurements = (signedIn?.data.baseData.measurements ?? {}) as Record<string, number>;
  expect(measurements.durationMs).toBeGreaterThan(0);

  // The referrer: never the provider, never this app, and none on the pages after sign-in.
  const idpHost = new URL(IDP).host;
  for (const view of telemetry.ofType('PageviewData')) {
    const refUri = (view.data.baseData.properties as Record<string, string> | undefined)?.refUri ?? '';
    expect(refUri).not.toContain(idpHost);
    if (view.data.baseData.name !== 'Home') expect(refUri).toBe('');
  }

  // The leak scan, over every item sent: no code, state, token, name or e-mail.
  expectNoSecretsPosted(telemetry.posts, callback, tokens, [ACCOUNTS.alice.name, ACCOUNTS.alice.email]);
  // The collector took every item (its answer counts what it stored; a post made as the page left for
  // the provider is answered after the page has gone, where only its status is seen).
  await expect.poll(() => telemetry.posts.every((post) => post.status === 200)).toBe(true);
  for (const post of telemetry.posts.filter((p) => p.answer)) {
    expect(post.answer?.itemsAccepted).toBe(post.envelopes.length);
  }
});

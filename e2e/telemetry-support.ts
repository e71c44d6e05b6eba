import { createHash } from 'node:crypto';
import { gunzipSync } from 'node:zlib';
import { expect, type Page, type Request } from '@playwright/test';
import { tracksFetch } from './browsers/in-page';

export interface Envelope {
  name: string;
  time: string;
  iKey: string;
  tags: Record<string, string>;
  data: { baseType: string; baseData: Record<string, unknown> };
}

export interface Post {
  url: string;
  body: string;
  envelopes: Envelope[];
  status?: number;
  answer?: { itemsReceived: number; itemsAccepted: number; errors: unknown[] };
}

const INGESTION = /\/v2(\.1)?\/track$/;

function decode(request: Request): string {
  const buffer = request.postDataBuffer();
  if (!buffer) return '';
  const gzipped = buffer[0] === 0x1f && buffer[1] === 0x8b;
  return (gzipped ? gunzipSync(buffer) : buffer).toString('utf8');
}

function parseEnvelopes(body: string): Envelope[] {
  const text = body.trim();
  if (!text) return [];
  if (text.startsWith('[')) return JSON.parse(text) as Envelope[];
  return text.split('\n').map((line) => JSON.parse(line) as Envelope);
}

/**
 * Records every telemetry post this page makes (XHR, fetch or beacon), what it carried and the
 * collector's answer (`posts`; `envelopes()` and `ofType()` give each item once), by passing each one
 * through to the real collector. `down()` simulates an outage of the endpoint (503). `holdAnswers()`:
 * the collector gets the post and stores it, but its answer never reaches the page (as when the page goes
 * before the answer arrives), so the SDK keeps the items to send again. Also records every other request,
 * to check where the browser talked to.
 */
export async function recordTelemetry(
  page: Page,
  options: { down?: () => boolean; holdAnswers?: () => boolean } = {},
) {
  const posts: Post[] = [];
  const requests: Request[] = [];
  page.on('request', (request) => requests.push(request));
  // Beacon bodies are visible to an interceptor even after the page has gone.
  await page.route(INGESTION, async (route) => {
    const request = route.request();
    if (request.method() !== 'POST') return route.continue();
    const body = decode(request);
    const post: Post = { url: request.url(), body, envelopes: parseEnvelopes(body) };
    posts.push(post);
    if (options.down?.()) {
      post.status = 503;
      return route.fulfill({ status: 503, headers: { 'retry-after': '1' }, body: '' });
    }
    const hold = options.holdAnswers?.() ?? false;
    let response;
    try {
      response = await route.fetch();
    } catch {
      // The test is over, or the server went away mid-request (a replica killed): the page sees the
      // connection fail, as it would. (CI's run of 54ff6da: "route.fetch: Test ended" in a replicas test.)
      post.status = 0;
      await route.abort('connectionfailed').catch(() => undefined);
      return;
    }
    post.status = response.status();
    if (hold) return; // Never answered; the page's navigation cancels the request.
    try {
      post.answer = JSON.parse((await response.body()).toString('utf8')) as NonNullable<Post['answer']>;
      await route.fulfill({ response });
    } catch {
      // The page went away meanwhile (a beacon at page hide): the collector has answered all the same.
    }
  });
  // Each item once, as the store keeps it (ADR 0015): the SDK delivers at least once, and sends an item
  // again, with the same text, from its session buffer when the answer to its post did not reach the page
  // (CI's run of ec99bac: a Profile view posted, answered, and posted again by the next page).
  const envelopes = () => [
    ...new Map(posts.flatMap((post) => post.envelopes).map((e) => [JSON.stringify(e), e])).values(),
  ];
  return {
    posts,
    requests,
    envelopes,
    ofType: (baseType: string) => envelopes().filter((envelope) => envelope.data.baseType === baseType),
  };
}

/**
 * The id Gatehouse once gave a signed-in user, an unsalted SHA-256 of issuer and subject (128 bits):
 * anyone who guessed a subject could recompute it, so it must never appear any more.
 */
export function unsaltedId(issuer: string, subject: string): string {
  return createHash('sha256').update(`${issuer}\n${subject}`).digest().subarray(0, 16).toString('base64url');
}

/** Waits until the SDK has loaded and started a session (its `ai_session` cookie exists). */
export async function waitForSdk(page: Page) {
  await page.waitForFunction(() => document.cookie.includes('ai_session='));
}

/**
 * Waits until the SDK on this document tracks `fetch` calls (in-page.ts `tracksFetch`). The
 * `ai_session` cookie (waitForSdk) outlives the document, so it cannot tell after a navigation.
 */
export async function waitForFetchTracking(page: Page) {
  await page.waitForFunction(tracksFetch);
}

/**
 * Fires the page's `pagehide`, so the SDK's own page-hide handler hands pending telemetry over (with a
 * keepalive request) while the page stays, where this test can still see the request. Real navigations
 * deliver the same way; collector-store.spec.ts proves it against the store.
 */
export async function hidePage(page: Page) {
  await page.evaluate(() => window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false })));
}

/** Answers the consent banner with Accept. */
export async function acceptUsageData(page: Page) {
  const banner = page.getByRole('dialog', { name: 'Usage data' });
  await expect(banner).toBeVisible();
  await banner.getByRole('button', { name: 'Accept' }).click();
  await expect(banner).toBeHidden();
}

/**
 * The leak scan: no post carries the callback's `code` or `state`, the session's tokens, or any of
 * `also` (the account's name and e-mail, header schemes).
 */
export function expectNoSecretsPosted(
  posts: Post[],
  callback: URL,
  tokens: { access_token?: string; id_token?: string; refresh_token?: string },
  also: string[],
) {
  const secrets = [
    callback.searchParams.get('code'),
    callback.searchParams.get('state'),
    tokens.access_token,
    tokens.id_token,
    tokens.refresh_token,
    ...also,
  ].filter((value): value is string => Boolean(value));
  expect(secrets.length).toBeGreaterThanOrEqual(6);
  for (const post of posts) {
    for (const secret of secrets) expect(post.body).not.toContain(secret);
  }
}

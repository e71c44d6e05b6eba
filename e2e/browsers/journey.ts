import { expect as baseExpect } from '@playwright/test';
import { TEST_CONTROLS_SECRET } from '../../playwright.config';
import type { BrowserSession, Tab } from './driver';
import { bearerTokenFor, bffSessionFor } from '../support';
import {
  hidePage,
  locate,
  storedSession,
  telemetryIds,
  telemetryTraces,
  tracksFetch,
  type Target,
} from './in-page';

/**
 * The user's journey, once, for every browser: consent, sign in, reload, an API call, a silent renewal,
 * telemetry stored by the collector, and sign-out in another tab. The same steps and assertions as
 * sign-in.spec.ts and telemetry.spec.ts check in Chromium, asked through the driver-neutral `Tab`, so
 * that Firefox and WebKit are held to them too. Where those specs read the browser's network (a
 * Playwright-only view), this journey reads what reached the server: the collector's store.
 */

/**
 * Twice the suite's wait for a state: MiniBrowser paints in software in a virtual display, and Firefox
 * and WebKit run beside the servers on the same two cores.
 */
export const expect = baseExpect.configure({ timeout: 20_000 });

const ADMIN = { username: 'admin', password: 'admin', name: 'Ada Admin', email: 'admin@example.com' };
/**
 * Short-lived access tokens, so that the journey sees a renewal (at half their life): the lifetime the
 * journey's server gives its provider (browsers.spec.ts). A server of its own rather than the shared
 * provider's test controls, which only a Playwright page can be put in a scope of.
 */
export const ACCESS_TOKEN_TTL_SECONDS = 10;

/** Where the journey goes: a Gatehouse and its bundled provider (support.ts `StartedServer`). */
export interface JourneyServer {
  origin: string;
  provider: string;
  /**
   * Who is the OAuth client (OIDC_MODE): the browser's token vault (default), or the server (`bff`), which
   * holds bearer tokens and renews them when a call needs it.
   */
  mode?: 'browser' | 'bff';
}

interface Tokens {
  access_token?: string;
  id_token?: string;
  refresh_token?: string;
  expires_at?: number;
  token_type?: string;
}

export const banner: Target = { role: 'banner' };
const consent: Target = { role: 'dialog', name: 'Usage data' };
export const displayName: Target = { testId: 'display-name' };

/** The text of what `target` finds, or null: never throws while a page is being replaced. */
export async function textOf(tab: Tab, target: Target): Promise<string | null> {
  try {
    return (await tab.evaluate(locate, { target, text: true })) as string | null;
  } catch {
    return null; // between two documents: asked again by the poll
  }
}

/** Runs `fn` in the page; undefined while the page is being replaced. */
async function probe<A, R>(
  tab: Tab,
  fn: (arg: A) => R | Promise<R>,
  arg: A,
): Promise<Awaited<R> | undefined> {
  try {
    return await tab.evaluate(fn, arg);
  } catch {
    return undefined;
  }
}

export const currentUrl = (tab: Tab) => probe(tab, () => location.href, null);

/** Waits until `target` is there, with `text` when given. */
export async function expectSeen(tab: Tab, target: Target, text?: string | RegExp, timeout?: number) {
  const poll = expect.poll(() => textOf(tab, target), {
    message: `${JSON.stringify(target)} is shown`,
    ...(timeout ? { timeout } : {}),
  });
  if (text === undefined) await poll.not.toBeNull();
  else if (typeof text === 'string') await poll.toBe(text);
  else await poll.toMatch(text);
}

/**
 * Clicks `target` once it is shown. Playwright waits for an element before acting on it; the WebDriver
 * sessions act at once, and a slower engine may not have rendered it yet (WebKit in CI: the banner's
 * "Sign in" a moment after consent).
 */
export async function press(tab: Tab, target: Target) {
  await expectSeen(tab, target);
  await tab.click(target);
}

/** Types `text` into the field `target` finds, once it is shown. */
export async function typeInto(tab: Tab, target: Target, text: string) {
  await expectSeen(tab, target);
  await tab.fill(target, text);
}

async function expectGone(tab: Tab, target: Target) {
  await expect.poll(() => textOf(tab, target), { message: `${JSON.stringify(target)} is gone` }).toBeNull();
}

/**
 * The tokens the provider issued in the tab's latest sign-in ({} when the tab is signed out): the app
 * never shows them (its token vault keeps them out of the page), so they are read from the provider's
 * test controls, as the latest provider session's grants for the journey's account (one browser at a
 * time runs the journey).
 */
async function tokensOf(tab: Tab, provider: string): Promise<Tokens> {
  if (!(await tab.evaluate(storedSession, null))) return {};
  const response = await fetch(`${provider}/__test/issued-tokens`, {
    headers: { 'X-Test-Controls-Secret': TEST_CONTROLS_SECRET },
  });
  expect(response.status).toBe(200);
  const { grants } = (await response.json()) as {
    grants: Array<Tokens & { sub?: string; sessionUid?: string }>;
  };
  const mine = grants.filter((grant) => grant.sub === ADMIN.username);
  const session = mine.at(-1)?.sessionUid;
  const merged: Tokens = {};
  for (const grant of mine.filter((g) => g.sessionUid === session)) {
    for (const [name, value] of Object.entries(grant)) {
      if (value !== undefined && value !== null) (merged as Record<string, unknown>)[name] = value;
    }
  }
  return merged;
}

export async function journey(
  browser: BrowserSession,
  { origin: APP, provider: IDP, mode = 'browser' }: JourneyServer,
): Promise<void> {
  const tab = await browser.newTab();

  // Consent: nothing of the telemetry SDK is loaded, stored or sent before the visitor says yes.
  await tab.goto(`${APP}/`);
  await expectSeen(tab, { role: 'heading', name: 'Welcome to Gatehouse' });
  await expectSeen(tab, consent);
  expect(await tab.evaluate(telemetryTraces, null)).toEqual({ sdkChunks: [], keys: [] });
  await press(tab, { role: 'button', name: 'Accept', within: consent });
  await expectGone(tab, consent);
  await expect
    .poll(() => probe(tab, telemetryIds, null), { message: 'the SDK started a session' })
    .toEqual({ session: expect.stringMatching(/\S{6,}/), user: expect.stringMatching(/\S{6,}/) });
  const anonymous = await tab.evaluate(telemetryIds, null);
  const telemetrySession = anonymous.session;

  // Sign in at the provider's own page, as a person would; back on the app, signed in, with no code or
  // state left in the address.
  await press(tab, { role: 'button', name: 'Sign in', within: banner });
  await expect.poll(() => currentUrl(tab)).toMatch(new RegExp(`^${IDP}/`));
  await expectSeen(tab, { label: 'Username' });
  await typeInto(tab, { label: 'Username' }, ADMIN.username);
  await typeInto(tab, { label: 'Password' }, ADMIN.password);
  await press(tab, { role: 'button', name: 'Sign in' });
  await expectSeen(tab, displayName, ADMIN.name);
  await expectSeen(tab, { role: 'button', name: 'Sign out', within: banner });
  await expect.poll(() => currentUrl(tab)).toBe(`${APP}/`);
  const signedIn = await tokensOf(tab, IDP);
  expect(signedIn.access_token).toBeTruthy();
  expect(signedIn.refresh_token).toBeTruthy();
  // Browser mode: bound to this browser's own non-extractable key (DPoP, the local provider's default):
  // WebCrypto keys kept in IndexedDB, which each engine must support. BFF mode: the server's tokens,
  // which never reach the browser.
  expect(signedIn.token_type).toBe(mode === 'bff' ? 'Bearer' : 'DPoP');

  // A reload keeps the session (the token vault, or the provider's session through a top-level
  // prompt=none request), and the signed-in UI comes back.
  await tab.reload();
  await expectSeen(tab, displayName, ADMIN.name);

  // The API, called by the app with the tab's token: the profile page and the diagnostics button.
  await press(tab, { role: 'link', name: 'Profile', within: { role: 'navigation' } });
  await expectSeen(tab, { testId: 'profile-name' }, ADMIN.name);
  await expectSeen(tab, { testId: 'profile-email' }, ADMIN.email);
  if (mode === 'bff') await expectSeen(tab, { testId: 'profile-renews' }, /^by the server, until /);
  await expectSeen(tab, { testId: 'api-me' }, /"sub": "admin"/);
  await press(tab, { role: 'link', name: 'Diagnostics', within: { role: 'navigation' } });
  await expectSeen(tab, { role: 'heading', name: 'Diagnostics' });
  // The call is reported only once this document's SDK tracks fetch (it loads after the first paint).
  await expect
    .poll(() => probe(tab, tracksFetch, null), {
      message: 'the SDK tracks fetch',
    })
    .toBe(true);
  await press(tab, { role: 'button', name: 'Call the API' });
  await expectSeen(tab, { role: 'status' }, 'The API answered for admin.');

  // Renewal: before the access token expires the tab renews it silently with its refresh token, which
  // rotates; the user stays signed in and the renewed token works. The BFF renews on the server when a
  // call comes past half the token's life: the app's next call, made here once that time has come.
  if (mode === 'bff') {
    await new Promise((resolve) =>
      setTimeout(
        resolve,
        Math.max(0, (signedIn.expires_at ?? 0) * 1000 - (ACCESS_TOKEN_TTL_SECONDS * 1000) / 2 - Date.now()) +
          1_000,
      ),
    );
    await press(tab, { role: 'button', name: 'Call the API' });
    await expectSeen(tab, { role: 'status' }, 'The API answered for admin.');
  }
  await expect
    .poll(async () => (await tokensOf(tab, IDP)).expires_at ?? 0, {
      message: 'the tokens are renewed',
      // Within a second lifetime: on two busy cores a renewal at half the first can come late.
      timeout: ACCESS_TOKEN_TTL_SECONDS * 2000,
    })
    .toBeGreaterThan(signedIn.expires_at ?? Infinity);
  const renewed = await tokensOf(tab, IDP);
  expect(renewed.refresh_token).not.toBe(signedIn.refresh_token);
  expect(renewed.access_token).not.toBe(signedIn.access_token);
  await expectSeen(tab, displayName, ADMIN.name);
  // The vault calls the API with the renewed token: a second call, answered (its dependency, below).
  const renewedAt = Date.now();
  await press(tab, { role: 'button', name: 'Call the API' });
  await expectSeen(tab, { role: 'status' }, 'The API answered for admin.');

  // Telemetry: what this browser sent is in the collector's store, under its session, with the
  // pseudonymous user and never a token, a code or the user's name.
  await tab.evaluate(hidePage, null);
  // Read as an admin from outside the browser: the browser's tokens are its vault's alone (or the
  // server's, in BFF mode, where the admin gets a session of their own).
  const adminHeaders =
    mode === 'bff'
      ? (await bffSessionFor(APP, ADMIN)).headers
      : { Authorization: `Bearer ${await bearerTokenFor(APP, IDP, ADMIN)}` };
  const timeline = async () => {
    const answer = await fetch(`${APP}/api/usage/sessions/${encodeURIComponent(telemetrySession)}/timeline`, {
      headers: adminHeaders,
    });
    return answer.status === 200
      ? ((await answer.json()) as {
          authenticated: boolean;
          items: Array<{ type: string; name: string | null; success: boolean | null; time: string }>;
        })
      : null;
  };
  await expect
    .poll(
      async () =>
        (await timeline())?.items.filter((item) => item.type === 'pageview').map((item) => item.name) ?? [],
      { message: 'the page views are stored', timeout: 20_000 },
    )
    .toEqual(expect.arrayContaining(['Home', 'Profile', 'Diagnostics']));
  await expect
    .poll(
      async () =>
        (await timeline())?.items.some(
          (item) =>
            item.type === 'dependency' && item.success !== false && Date.parse(item.time) >= renewedAt,
        ),
      { message: 'the API call after the renewal is stored, answered' },
    )
    .toBe(true);
  const stored = await timeline();
  expect(stored?.authenticated).toBe(true);
  // Each page viewed once is reported once, and nothing failed in this browser (the SDK reports every
  // uncaught error and unhandled rejection as an exception).
  const views = stored?.items.filter((item) => item.type === 'pageview').map((item) => item.name) ?? [];
  expect(views.filter((name) => name === 'Profile')).toHaveLength(1);
  expect(views.filter((name) => name === 'Diagnostics')).toHaveLength(1);
  expect(stored?.items.filter((item) => item.type === 'exception')).toEqual([]);
  const storedText = JSON.stringify(stored);
  for (const secret of [
    signedIn.access_token,
    signedIn.id_token,
    signedIn.refresh_token,
    renewed.access_token,
    renewed.refresh_token,
    ADMIN.email,
    ADMIN.name,
  ]) {
    expect(secret).toBeTruthy();
    expect(storedText).not.toContain(secret);
  }
  expect(storedText).not.toMatch(/[?&](code|state)=/);

  // Another tab: it takes the session from the first; signing out there signs the first out too.
  const other = await browser.newTab();
  await other.goto(`${APP}/`);
  await expectSeen(other, displayName, ADMIN.name);
  await press(other, { role: 'button', name: 'Sign out', within: banner });
  await expectSeen(tab, { role: 'button', name: 'Sign in', within: banner });
  expect(await tab.evaluate(storedSession, null)).toBeNull();
  // The other tab went to the provider's end-session endpoint and is back, signed out.
  await expect.poll(() => currentUrl(other), { message: 'the other tab is back home' }).toBe(`${APP}/`);
  await expectSeen(other, { role: 'button', name: 'Sign in', within: banner });
  expect(await other.evaluate(storedSession, null)).toBeNull();
  // Signed out, telemetry goes on under new anonymous ids, which nothing links to the old ones. The
  // tabs share the cookies that hold them, and both see the same user: one tab makes it, the other takes
  // it up (where both wrote it at once, Firefox's processes each kept their own).
  const fresh = async () => {
    const ids = await probe(tab, telemetryIds, null);
    const others = await probe(other, telemetryIds, null);
    return {
      session: Boolean(ids?.session) && ids?.session !== anonymous.session,
      user: Boolean(ids?.user) && ids?.user !== anonymous.user,
      sameUserInBothTabs: ids?.user === others?.user,
    };
  };
  await expect
    .poll(fresh, { message: 'fresh anonymous ids after sign-out, the same in both tabs' })
    .toEqual({ session: true, user: true, sameUserInBothTabs: true });

  // The provider's session is gone too: signing in again asks for the password.
  await press(tab, { role: 'button', name: 'Sign in', within: banner });
  await expectSeen(tab, { label: 'Username' });
}

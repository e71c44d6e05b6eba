import type { BrowserSession, Tab } from './driver';
import { banner, currentUrl, displayName, expect, expectSeen, press, textOf, typeInto } from './journey';

/**
 * The walk against an independent provider (Django OAuth Toolkit: opaque tokens, no end-session
 * endpoint), in any browser through the driver-neutral `Tab`: sign in at the provider's own page, reload,
 * the API through the app, a call past the access token's lifetime, another tab, and sign-out there (here
 * only, with the notice that the provider's session may remain), which signs the first tab out too.
 * The same steps whatever the mode: the token vault in the browser, or the server as a BFF.
 */
export async function independentWalk(
  browser: BrowserSession,
  {
    app,
    provider,
    account,
    accessTokenTtl,
  }: {
    app: string;
    provider: string;
    account: { username: string; password: string; name: string };
    /** The provider's access token lifetime, in seconds: the walk calls the API past it. */
    accessTokenTtl?: number;
  },
): Promise<void> {
  const tab = await browser.newTab();
  await tab.goto(`${app}/`);
  await press(tab, { role: 'button', name: 'Sign in', within: banner });
  await expect.poll(() => currentUrl(tab)).toMatch(new RegExp(`^${provider}/`));
  // Django's own login form (form.as_p), whose labels end with a colon.
  await typeInto(tab, { label: 'Username:' }, account.username);
  await typeInto(tab, { label: 'Password:' }, account.password);
  await press(tab, { role: 'button', name: 'Sign in' });
  await expectSeen(tab, displayName, account.name);
  await expect.poll(() => currentUrl(tab)).toBe(`${app}/`);

  // A reload whose vault has stopped (Firefox, WebKit: DOT's tokens are bearer tokens) restores the
  // session through a top-level prompt=none request, with the signed-in UI on screen meanwhile: the walk
  // goes on once the page has stayed signed in, at the same address, for five seconds.
  await tab.reload();
  await settledSignedIn(tab, account.name);

  // DOT's opaque access token, checked by the API at DOT's userinfo.
  await press(tab, { role: 'link', name: 'Profile', within: { role: 'navigation' } });
  await expectSeen(tab, { testId: 'api-me' }, /"verifiedBy": "userinfo"/);

  // Renewal: past the access token's lifetime the API still answers (the vault renewed it before it
  // expired; in BFF mode the server did, at this call): DOT's userinfo refuses an expired token.
  if (accessTokenTtl !== undefined) {
    await new Promise((resolve) => setTimeout(resolve, (accessTokenTtl + 2) * 1000));
    await press(tab, { role: 'link', name: 'Home', within: { role: 'navigation' } });
    await press(tab, { role: 'link', name: 'Profile', within: { role: 'navigation' } });
    await expectSeen(tab, { testId: 'api-me' }, /"verifiedBy": "userinfo"/);
  }

  // Another tab takes the session; signing out there (here only: DOT has no end-session endpoint)
  // signs the first tab out too.
  const other = await browser.newTab();
  await other.goto(`${app}/`);
  await settledSignedIn(other, account.name);
  await press(other, { role: 'button', name: 'Sign out', within: banner });
  await expectSeen(other, { role: 'button', name: 'Sign in', within: banner });
  await expectSeen(other, { role: 'status' }, /provider/i);
  await expectSeen(tab, { role: 'button', name: 'Sign in', within: banner });
  await other.close();
  await tab.close();
}

/** Resolves once the tab has shown `name` signed in, at one address, for five seconds in a row. */
async function settledSignedIn(tab: Tab, name: string) {
  let last = '';
  let since = Date.now();
  await expect
    .poll(
      async () => {
        const now = `${(await currentUrl(tab)) ?? ''} ${(await textOf(tab, displayName)) ?? ''}`;
        if (now !== last) {
          last = now;
          since = Date.now();
        }
        return now.endsWith(` ${name}`) && Date.now() - since >= 5_000;
      },
      { message: 'the tab stays signed in, at one address', intervals: [250], timeout: 60_000 },
    )
    .toBe(true);
}

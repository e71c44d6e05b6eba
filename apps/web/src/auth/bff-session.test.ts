import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { BffSession, type BffEnvironment } from './bff-session';
import { SESSION_HINT_KEY, SESSION_SOMEWHERE_KEY } from './session-hint';
import type { ReportSignInEvent, SignInTelemetryEvent } from './sign-in-telemetry';
import type { TabSignal, TabSignals } from './tab-signals';
import { APP_ORIGIN, AUTHORITY } from './test-provider';
import { callApi } from './use-api';

const serverUser = {
  issuer: AUTHORITY,
  sub: 'alice',
  name: 'Alice',
  email: null,
  roles: ['member'],
  expiresAt: 1_800_000_000,
};
const shownUser = { ...serverUser, email: undefined, renewsAt: null, renewedByServer: true as const };
const END_SESSION = `${AUTHORITY}/session/end?client_id=gatehouse`;

/**
 * The server's side of the BFF contract behind a fake `fetch`: `/bff/user` (with `X-CSRF`), `/bff/logout`
 * and the API, with the session held as the server holds it. Every request is recorded.
 */
class FakeServer {
  user: typeof serverUser | null = null;
  endSessionUrl: string | null = END_SESSION;
  /** The next requests fail as a fetch does without a network. */
  offline = false;
  readonly requests: Request[] = [];

  readonly fetch = vi.fn<typeof fetch>((input, init) => {
    const request = new Request(input, init);
    this.requests.push(request);
    if (this.offline) return Promise.reject(new TypeError('Failed to fetch'));
    return Promise.resolve(this.answer(request));
  });

  /** The requests of `path`, as `METHOD path`. */
  calls(path: string): string[] {
    return this.requests
      .filter((request) => new URL(request.url).pathname === path)
      .map((request) => `${request.method} ${path}`);
  }

  private answer(request: Request): Response {
    const { pathname } = new URL(request.url);
    if (pathname.startsWith('/api/')) {
      return this.user ? Response.json({ ok: true }) : new Response(null, { status: 401 });
    }
    if (request.headers.get('X-CSRF') !== '1') return new Response(null, { status: 400 });
    if (pathname === '/bff/user' && request.method === 'GET') return Response.json({ user: this.user });
    if (pathname === '/bff/logout' && request.method === 'POST') {
      this.user = null;
      return Response.json({ endSessionUrl: this.endSessionUrl });
    }
    return new Response(null, { status: 404 });
  }
}
const fakeServer = () => new FakeServer();

/** Tabs that hear what a test sends them, and remember what this tab said. */
function fakeTabs() {
  const listeners: ((signal: TabSignal) => void)[] = [];
  const sent: TabSignal[] = [];
  const tabs: TabSignals = {
    send: (signal) => void sent.push(signal),
    listen: (listener) => void listeners.push(listener),
  };
  return { tabs, sent, say: (signal: TabSignal) => listeners.forEach((listener) => listener(signal)) };
}

function newSession(server: FakeServer, href = `${APP_ORIGIN}/`) {
  const events: SignInTelemetryEvent[] = [];
  const visible: (() => void)[] = [];
  const tabs = fakeTabs();
  const environment = {
    fetch: server.fetch,
    location: { origin: APP_ORIGIN, href, assign: vi.fn<(url: string) => void>() },
    sessionStorage: window.sessionStorage,
    localStorage: window.localStorage,
    now: () => 1_700_000_000_000,
    tabs: tabs.tabs,
    leavingFor: vi.fn<(url: string) => void>(),
    reportSignIn: vi.fn<ReportSignInEvent>((event) => void events.push(event)),
    whenVisible: (listener: () => void) => void visible.push(listener),
  } satisfies BffEnvironment;
  const session = new BffSession({ authority: AUTHORITY }, environment);
  return {
    session,
    environment,
    tabs,
    /** Each sign-in event's outcome, with its step and reason when it failed. */
    journey: () =>
      events
        .filter(({ name }) => name === 'gatehouse.sign-in')
        .map(({ properties: { outcome, step, reason } }) =>
          [outcome, step, reason].filter(Boolean).join(' '),
        ),
    sessionEnds: () =>
      events
        .filter(({ name }) => name === 'gatehouse.session-end')
        .map(({ properties }) => properties.reason),
    becomeVisible: async () => {
      visible.forEach((listener) => listener());
      await vi.waitFor(() => expect(server.fetch).toHaveBeenCalled());
    },
  };
}

/** A tab whose sign-in went to `/bff/login` and came back to `callback`. */
async function signInAndReturn(
  server: FakeServer,
  callback = `${APP_ORIGIN}/callback`,
  returnTo = '/profile',
) {
  const before = newSession(server);
  await before.session.start();
  await before.session.signIn(returnTo);
  server.user = serverUser;
  const after = newSession(server, callback);
  await after.session.start();
  return { ...after, before, result: await after.session.completeSignIn(callback) };
}

async function signedIn(server: FakeServer) {
  server.user = serverUser;
  const tab = newSession(server);
  await tab.session.start();
  expect(tab.session.getState()).toEqual({ status: 'signed-in', user: shownUser });
  server.fetch.mockClear();
  server.requests.length = 0;
  tab.tabs.sent.length = 0;
  return tab;
}

afterEach(() => {
  window.sessionStorage.clear();
  window.localStorage.clear();
});

describe('BffSession.start', () => {
  it("shows the server's user, and keeps the hint and the mark the first render reads", async () => {
    const server = fakeServer();
    await signedIn(server);
    expect(JSON.parse(window.sessionStorage.getItem(SESSION_HINT_KEY) ?? 'null')).toEqual({
      ...shownUser,
      email: undefined,
    });
    expect(window.localStorage.getItem(SESSION_SOMEWHERE_KEY)).toBe('1');
  });

  it('is signed out when the server knows no session, and takes the mark away', async () => {
    const server = fakeServer();
    window.localStorage.setItem(SESSION_SOMEWHERE_KEY, '1');
    const { session } = newSession(server);
    await session.start();
    expect(session.getState()).toEqual({ status: 'signed-out' });
    expect(window.localStorage.getItem(SESSION_SOMEWHERE_KEY)).toBeNull();
    expect(server.requests[0]?.headers.get('X-CSRF')).toBe('1');
  });

  it('says the session expired when this tab showed one the server no longer has', async () => {
    const server = fakeServer();
    window.sessionStorage.setItem(SESSION_HINT_KEY, JSON.stringify(shownUser));
    const tab = newSession(server);
    await tab.session.start();
    expect(tab.session.getState()).toMatchObject({
      status: 'signed-out',
      notice: { code: 'session_expired' },
    });
    expect(tab.sessionEnds()).toEqual(['expiry']);
  });

  it('is signed out with the notice for a sign-in that cannot load when the server cannot be reached', async () => {
    const server = fakeServer();
    server.offline = true;
    const { session } = newSession(server);
    await session.start();
    expect(session.getState()).toMatchObject({
      status: 'signed-out',
      notice: { code: 'provider_unreachable' },
    });
  });

  it('waits for the callback on the redirect URI', async () => {
    const server = fakeServer();
    const { session } = newSession(server, `${APP_ORIGIN}/callback`);
    await session.start();
    expect(session.getState()).toEqual({ status: 'loading' });
    expect(server.fetch).not.toHaveBeenCalled();
  });
});

describe('BffSession.signIn', () => {
  it("goes to the server's /bff/login once, however often it is asked at once, after the start event", async () => {
    const server = fakeServer();
    const tab = newSession(server);
    await tab.session.start();
    await Promise.all([tab.session.signIn('/profile', 'guarded-page'), tab.session.signIn('/profile')]);
    expect(tab.environment.location.assign.mock.calls).toEqual([[`${APP_ORIGIN}/bff/login`]]);
    expect(tab.environment.leavingFor).toHaveBeenCalledWith(AUTHORITY);
    expect(tab.journey()).toEqual(['started']);
  });

  it('counts a sign-in after the session expired as the expired-session trigger', async () => {
    const server = fakeServer();
    window.sessionStorage.setItem(SESSION_HINT_KEY, JSON.stringify(shownUser));
    const tab = newSession(server);
    await tab.session.start();
    await tab.session.signIn('/');
    expect(tab.environment.reportSignIn).toHaveBeenLastCalledWith(
      expect.objectContaining({ properties: { outcome: 'started', trigger: 'expired-session' } }),
    );
  });

  it('never returns to another origin after sign-in', async () => {
    const server = fakeServer();
    const { result } = await signInAndReturn(server, `${APP_ORIGIN}/callback`, '//evil.example/x');
    expect(result).toEqual({ ok: true, returnTo: '/' });
  });
});

describe('BffSession.completeSignIn', () => {
  it('is signed in and goes where sign-in started, reporting each step of the journey', async () => {
    const server = fakeServer();
    const tab = await signInAndReturn(server);
    expect(tab.result).toEqual({ ok: true, returnTo: '/profile' });
    expect(tab.session.getState()).toEqual({ status: 'signed-in', user: shownUser });
    expect([...tab.before.journey(), ...tab.journey()]).toEqual([
      'started',
      'returned',
      'redeemed',
      'signed-in',
    ]);
  });

  it('processes the return once under React StrictMode (which asks twice at once)', async () => {
    const server = fakeServer();
    const before = newSession(server);
    await before.session.signIn('/profile');
    server.user = serverUser;
    const tab = newSession(server, `${APP_ORIGIN}/callback`);
    const callback = `${APP_ORIGIN}/callback`;
    const [first, second] = await Promise.all([
      tab.session.completeSignIn(callback),
      tab.session.completeSignIn(callback),
    ]);
    expect(first).toEqual({ ok: true, returnTo: '/profile' });
    expect(second).toBe(first);
    expect(server.calls('/bff/user')).toEqual(['GET /bff/user']);
    expect(tab.journey()).toEqual(['returned', 'redeemed', 'signed-in']);
  });

  const failures: [string, string, string][] = [
    ['state_mismatch', 'state_mismatch', 'failed return state_mismatch'],
    ['provider_unreachable', 'provider_unreachable', 'failed redeem network'],
    ['id_token_invalid', 'id_token_invalid', 'failed id-token response_invalid'],
    ['redeem_failed', 'token_request_failed', 'failed redeem other'],
    ['access_denied', 'provider_error', 'failed provider access_denied'],
    ['login_required', 'provider_error', 'failed provider login_required'],
    ['AADSTS50105', 'provider_error', 'failed provider other'],
  ];
  it.each(failures)('fails with %s as %s, reported as "%s"', async (error, code, reported) => {
    const server = fakeServer();
    const callback = `${APP_ORIGIN}/callback?error=${error}&error_description=Call+0800+to+unlock`;
    const tab = await signInAndReturn(server, callback);
    expect(tab.result).toMatchObject({ ok: false, error: { code } });
    expect(JSON.stringify(tab.result)).not.toContain('0800');
    expect(tab.session.getState()).toMatchObject({ status: 'signed-out', notice: { code } });
    expect(tab.journey()).toEqual(['returned', reported]);
  });

  it('fails when the browser kept no session (cookies refused)', async () => {
    const server = fakeServer();
    const before = newSession(server);
    await before.session.signIn('/');
    const tab = newSession(server, `${APP_ORIGIN}/callback`);
    await expect(tab.session.completeSignIn(`${APP_ORIGIN}/callback`)).resolves.toMatchObject({
      ok: false,
      error: { code: 'session_missing' },
    });
    expect(tab.journey()).toEqual(['returned', 'failed redeem response_invalid']);
  });

  it('sends a /callback with no sign-in of this tab waiting home, reporting nothing (a reload)', async () => {
    const server = fakeServer();
    server.user = serverUser;
    const tab = newSession(server, `${APP_ORIGIN}/callback`);
    await expect(tab.session.completeSignIn(`${APP_ORIGIN}/callback`)).resolves.toEqual({
      ok: true,
      returnTo: '/',
    });
    expect(tab.session.getState().status).toBe('signed-in');
    expect(tab.journey()).toEqual([]);
  });
});

describe('BffSession.signOut', () => {
  it("ends the server's session, tells the other tabs, then goes to the provider's end-session URL", async () => {
    const server = fakeServer();
    const tab = await signedIn(server);
    const states: string[] = [];
    tab.session.subscribe(() => states.push(tab.session.getState().status));
    await expect(tab.session.signOut()).resolves.toBe('leaving');
    expect(states).toEqual(['signing-out']);
    expect(server.calls('/bff/logout')).toEqual(['POST /bff/logout']);
    expect(server.requests[0]?.headers.get('X-CSRF')).toBe('1');
    expect(tab.tabs.sent).toEqual(['signed-out']);
    expect(tab.environment.location.assign).toHaveBeenCalledWith(END_SESSION);
    expect(window.sessionStorage.getItem(SESSION_HINT_KEY)).toBeNull();
    expect(tab.sessionEnds()).toEqual(['sign-out']);
  });

  it('says the provider session may remain when the provider offers no sign-out', async () => {
    const server = fakeServer();
    server.endSessionUrl = null;
    const tab = await signedIn(server);
    await expect(tab.session.signOut()).resolves.toBe('signed-out');
    expect(tab.session.getState()).toMatchObject({ notice: { code: 'provider_session_remains' } });
    expect(tab.environment.location.assign).not.toHaveBeenCalled();
  });

  it('ends here and says the server may keep the session when it cannot be reached', async () => {
    const server = fakeServer();
    const tab = await signedIn(server);
    server.offline = true;
    await expect(tab.session.signOut()).resolves.toBe('signed-out');
    expect(tab.session.getState()).toMatchObject({
      status: 'signed-out',
      notice: { code: 'sign_out_failed' },
    });
    expect(tab.tabs.sent).toEqual([]);
  });
});

describe("BffSession's API calls", () => {
  it('carry X-CSRF and the cookie, and never follow a redirect', async () => {
    const server = fakeServer();
    const { session } = await signedIn(server);
    const answer = await session.fetchApi({
      url: `${APP_ORIGIN}/api/notes`,
      method: 'post',
      headers: [['Content-Type', 'application/json']],
      body: '{"text":"hi"}',
    });
    expect(answer).toMatchObject({ status: 200, body: '{"ok":true}' });
    const init = server.fetch.mock.calls[0]?.[1];
    expect(init).toMatchObject({
      method: 'POST',
      credentials: 'same-origin',
      redirect: 'error',
      body: '{"text":"hi"}',
    });
    const sent = server.requests[0];
    expect(sent?.headers.get('X-CSRF')).toBe('1');
    expect(sent?.headers.get('Content-Type')).toBe('application/json');
  });

  it.each([
    ['another origin', 'https://evil.example/api/notes'],
    ['a path outside the API', `${APP_ORIGIN}/bff/logout`],
  ])('refuse %s', async (_, url) => {
    const server = fakeServer();
    const { session } = await signedIn(server);
    await expect(session.fetchApi({ url, method: 'POST', headers: [] })).rejects.toThrow(TypeError);
    expect(server.fetch).not.toHaveBeenCalled();
  });

  it('end signed out with a notice, once, when the API answers 401 (the session is gone)', async () => {
    const server = fakeServer();
    const tab = await signedIn(server);
    server.user = null; // A back-channel logout, say.
    await expect(callApi('/api/notes', {}, tab.session)).rejects.toMatchObject({
      status: 401,
      signInRequired: true,
    });
    expect(tab.session.getState()).toMatchObject({
      status: 'signed-out',
      notice: { code: 'signed_out_elsewhere' },
    });
    expect(server.calls('/api/notes')).toHaveLength(1);
    expect(server.calls('/bff/user')).toHaveLength(1);
  });

  it('renew() answers whether the server still holds the session', async () => {
    const server = fakeServer();
    const { session } = await signedIn(server);
    await expect(session.renew()).resolves.toBe(true);
    server.user = null;
    await expect(session.renew()).resolves.toBe(false);
  });
});

describe('BffSession and the other tabs', () => {
  it('signs out here when another tab signed out, and answers "who" only while signed in', async () => {
    const server = fakeServer();
    const tab = await signedIn(server);
    tab.tabs.say('who');
    tab.tabs.say('signed-out');
    tab.tabs.say('who');
    expect(tab.tabs.sent).toEqual(['here']);
    expect(tab.session.getState()).toMatchObject({
      status: 'signed-out',
      notice: { code: 'signed_out_elsewhere' },
    });
    expect(tab.sessionEnds()).toEqual(['other-tab']);
    expect(server.fetch).not.toHaveBeenCalled();
  });

  it('asks the server when another tab signed in', async () => {
    const server = fakeServer();
    const tab = newSession(server);
    await tab.session.start();
    server.user = serverUser;
    tab.tabs.say('signed-in');
    await vi.waitFor(() => expect(tab.session.getState().status).toBe('signed-in'));
  });

  it('asks the server again when the tab is shown, and signs out if the session ended meanwhile', async () => {
    const server = fakeServer();
    const tab = await signedIn(server);
    server.user = null;
    await tab.becomeVisible();
    await vi.waitFor(() => expect(tab.session.getState().status).toBe('signed-out'));
    expect(tab.session.getState()).toMatchObject({ notice: { code: 'signed_out_elsewhere' } });
  });
});

describe("the BFF session's chunk", () => {
  /** The modules `file` imports for their values (type-only imports are erased), transitively. */
  function staticImports(file: string, seen = new Set<string>()): Set<string> {
    const source = readFileSync(file, 'utf8');
    for (const [, specifier] of source.matchAll(
      /^(?:import|export)\s+(?!type\b)[^;]*?\sfrom\s+'([^']+)';/gms,
    )) {
      if (!specifier) continue;
      if (!specifier.startsWith('.')) {
        seen.add(specifier);
        continue;
      }
      const base = resolve(dirname(file), specifier);
      const target = [`${base}.ts`, `${base}.tsx`].find((candidate) => {
        try {
          return readFileSync(candidate) !== undefined;
        } catch {
          return false;
        }
      });
      if (target && !seen.has(target)) {
        seen.add(target);
        staticImports(target, seen);
      }
    }
    return seen;
  }

  it('loads neither oidc-client-ts, jose, nor the token vault', () => {
    const imports = [...staticImports(resolve(import.meta.dirname, 'bff-session.ts'))];
    expect(imports.filter((name) => /^(oidc-client-ts|jose)$|vault|oidc-session/.test(name))).toEqual([]);
  });
});

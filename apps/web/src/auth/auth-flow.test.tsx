import { act, render, screen, waitFor } from '@testing-library/react';
import { StrictMode } from 'react';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { describe, expect, it, vi } from 'vitest';
import { AuthProvider, useAuth } from './auth-context';
import type { AuthSession, AuthState, CallbackResult } from './auth-state';
import { fakeSession } from './fake-session';
import { CallbackPage } from './callback-page';
import { RequireAuth } from './require-auth';

function renderWith(session: AuthSession, ui: React.ReactNode, path = '/') {
  const location = memoryLocation({ path, record: true });
  const loadSession = () => Promise.resolve(session);
  render(
    <StrictMode>
      <Router hook={location.hook}>
        {/* A session may exist: the guard waits for the session's own word, as on a reload. */}
        <AuthProvider loadSession={loadSession} sessionElsewhere={() => true}>
          {ui}
        </AuthProvider>
      </Router>
    </StrictMode>,
  );
  return location;
}

describe('RequireAuth', () => {
  it('sends a signed-out visitor to sign in, coming back to where they were', async () => {
    window.history.replaceState(null, '', '/profile?tab=2');
    const session = fakeSession({ status: 'signed-out' });
    renderWith(session, <RequireAuth access="signed-in">secret</RequireAuth>, '/profile');
    await waitFor(() => expect(session.signIn).toHaveBeenCalledWith('/profile?tab=2', 'guarded-page'));
    expect(screen.queryByText('secret')).toBeNull();
  });

  it('never redirects on its own when the user was signed out for a reason', async () => {
    const session = fakeSession({
      status: 'signed-out',
      notice: { code: 'renewal_failed', message: 'Your session could not be renewed.' },
    });
    renderWith(session, <RequireAuth access="signed-in">secret</RequireAuth>, '/profile');
    expect(await screen.findAllByRole('heading', { name: 'Sign in required' })).toHaveLength(1);
    expect(session.signIn).not.toHaveBeenCalled();
  });

  it('shows the page to a signed-in user', async () => {
    const session = fakeSession({
      status: 'signed-in',
      user: {
        issuer: 'https://idp',
        sub: 'a',
        name: 'A',
        email: undefined,
        roles: [],
        expiresAt: 0,
        renewsAt: null,
      },
    });
    renderWith(session, <RequireAuth access="signed-in">secret</RequireAuth>, '/profile');
    expect(await screen.findAllByText('secret')).toHaveLength(1);
  });
});

describe('CallbackPage', () => {
  it('goes to the page sign-in started from, replacing the callback entry and the address first', async () => {
    window.history.replaceState(null, '', '/callback?code=c&state=s');
    const session = fakeSession(
      { status: 'signed-out' },
      { completeSignIn: vi.fn(() => Promise.resolve<CallbackResult>({ ok: true, returnTo: '/profile' })) },
    );
    const location = renderWith(session, <CallbackPage />, '/callback');
    await waitFor(() => expect(location.history?.at(-1)).toBe('/profile'));
    expect(location.history).not.toContain('/callback?code=c&state=s');
    expect(window.location.search).toBe('');
  });

  it("hands a /callback without a query to the session: the BFF's server comes back so", async () => {
    window.history.replaceState(null, '', '/callback');
    const session = fakeSession(
      { status: 'signed-out' },
      { completeSignIn: vi.fn(() => Promise.resolve<CallbackResult>({ ok: true, returnTo: '/profile' })) },
    );
    const location = renderWith(session, <CallbackPage />, '/callback');
    await waitFor(() => expect(location.history?.at(-1)).toBe('/profile'));
    expect(session.completeSignIn).toHaveBeenCalledWith(`${window.location.origin}/callback`);
  });

  it('recovers from a failed navigation by going home, with no code or state left behind', async () => {
    window.history.replaceState(null, '', '/callback?code=c&state=s');
    const session = fakeSession(
      { status: 'signed-out' },
      { completeSignIn: vi.fn(() => Promise.resolve<CallbackResult>({ ok: true, returnTo: '/broken' })) },
    );
    const location = memoryLocation({ path: '/callback', record: true });
    const failingHook: typeof location.hook = () => {
      const [path, navigate] = location.hook();
      return [
        path,
        (to, options) => {
          if (to === '/broken') throw new Error('navigation failed');
          navigate(to, options);
        },
      ];
    };
    render(
      <Router hook={failingHook}>
        <AuthProvider loadSession={() => Promise.resolve(session)}>
          <CallbackPage />
        </AuthProvider>
      </Router>,
    );
    await waitFor(() => expect(location.history?.at(-1)).toBe('/'));
    expect(window.location.search).toBe('');
  });

  it('shows why sign-in failed, with a way to try again, and drops code and state from the URL', async () => {
    window.history.replaceState(null, '', '/callback?code=c&state=s');
    const session = fakeSession(
      { status: 'signed-out' },
      {
        completeSignIn: vi.fn(() =>
          Promise.resolve<CallbackResult>({
            ok: false,
            error: {
              code: 'id_token_invalid',
              message: "The identity provider's ID token was rejected: it has expired.",
            },
          }),
        ),
      },
    );
    renderWith(session, <CallbackPage />, '/callback');
    expect(await screen.findAllByRole('heading', { name: 'Sign-in failed' })).toHaveLength(1);
    expect(screen.getByRole('alert').textContent).toContain('it has expired');
    expect(screen.queryAllByRole('button', { name: 'Try again' })).toHaveLength(1);
    expect(window.location.search).toBe('');
  });

  it('keeps showing the failure when the session state changes afterwards', async () => {
    window.history.replaceState(null, '', '/callback?code=c&state=s');
    let state: AuthState = { status: 'loading' };
    const listeners = new Set<() => void>();
    const failure = {
      code: 'state_mismatch' as const,
      message: 'This sign-in response does not belong here.',
    };
    const session = fakeSession(state, {
      getState: () => state,
      subscribe: (listener) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      completeSignIn: vi.fn(() => {
        state = { status: 'signed-out', notice: failure };
        listeners.forEach((listener) => listener());
        return Promise.resolve({ ok: false, error: failure } as const);
      }),
    });
    const location = renderWith(session, <CallbackPage />, '/callback');
    expect(await screen.findAllByRole('heading', { name: 'Sign-in failed' })).toHaveLength(1);
    // The session changes once more after the failure is shown; act() runs every render and effect
    // that follows before the checks.
    await act(async () => {
      state = { status: 'signed-out' };
      listeners.forEach((listener) => listener());
      await Promise.resolve();
    });
    expect(screen.queryAllByRole('heading', { name: 'Sign-in failed' })).toHaveLength(1);
    expect(location.history).not.toContain('/');
  });
});

describe('AuthProvider before the session has loaded', () => {
  const alice = {
    issuer: 'http://localhost:3001',
    sub: 'alice',
    name: 'Alice',
    email: undefined,
    roles: ['member'],
    expiresAt: Math.floor(Date.now() / 1000) + 300,
    renewsAt: null,
  };

  function StatusProbe() {
    const { state } = useAuth();
    return <p>{state.status === 'signed-in' ? `signed in as ${state.user.name}` : state.status}</p>;
  }

  it('shows the user the last page of this tab knew, so a reload paints no signed-out UI', () => {
    render(
      <AuthProvider loadSession={() => new Promise<AuthSession>(() => {})} initialUser={() => alice}>
        <StatusProbe />
      </AuthProvider>,
    );
    expect(screen.queryAllByText('signed in as Alice')).toHaveLength(1);
  });

  it('shows loading, never signed out, without such a user while a session may exist elsewhere', () => {
    render(
      <AuthProvider
        loadSession={() => new Promise<AuthSession>(() => {})}
        initialUser={() => null}
        sessionElsewhere={() => true}
      >
        <StatusProbe />
      </AuthProvider>,
    );
    expect(screen.queryAllByText('loading')).toHaveLength(1);
  });

  it('offers signing in at once where nothing in the browser says a session exists', () => {
    render(
      <AuthProvider
        loadSession={() => new Promise<AuthSession>(() => {})}
        initialUser={() => null}
        sessionElsewhere={() => false}
      >
        <StatusProbe />
      </AuthProvider>,
    );
    expect(screen.queryAllByText('signed-out')).toHaveLength(1);
  });

  it('follows the session once it has loaded', async () => {
    const session = fakeSession({ status: 'signed-out' });
    render(
      <AuthProvider loadSession={() => Promise.resolve(session)} initialUser={() => alice}>
        <StatusProbe />
      </AuthProvider>,
    );
    expect(await screen.findAllByText('signed-out')).toHaveLength(1);
  });
});

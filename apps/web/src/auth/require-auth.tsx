import { mayAccess, roleFor, type Access } from '@gatehouse/api-contract';
import { useEffect, type ReactNode } from 'react';
import { useAuth } from './auth-context';
import { SignInButton } from './sign-in-button';

/**
 * Guards a route by its access, as the contract's mayAccess decides it for the API too. A signed-out
 * visitor it keeps out is sent to sign in and comes back here; one who was signed out for a reason
 * (renewal failed, provider unreachable) reads why and chooses, so a failure never turns into a
 * redirect loop.
 */
export function RequireAuth({ children, access }: { children: ReactNode; access: Access }) {
  const { state, signIn } = useAuth();
  const openToAnyone = mayAccess(access, null);
  const mustSignIn = !openToAnyone && state.status === 'signed-out' && !state.notice;

  useEffect(() => {
    if (mustSignIn) {
      const { pathname, search, hash } = window.location;
      void signIn(`${pathname}${search}${hash}`, 'guarded-page').catch(() => undefined);
    }
  }, [mustSignIn, signIn]);

  if (openToAnyone) return children;
  if (state.status === 'signed-in') {
    if (mayAccess(access, state.user)) return children;
    const role = roleFor(access);
    return (
      <section className="page">
        <h1>No access</h1>
        <p>
          {role ? (
            <>
              This page is for users with the <strong>{role}</strong> role, and you are signed in without it.
            </>
          ) : (
            'This page is not open to the account you are signed in with.'
          )}
        </p>
      </section>
    );
  }
  if (state.status === 'signing-out') {
    return (
      <section className="page" aria-busy="true">
        <p>Signing you out…</p>
      </section>
    );
  }
  if (state.status === 'signed-out' && state.notice) {
    return (
      <section className="page">
        <h1>Sign in required</h1>
        <p>You need to be signed in to see this page.</p>
        <p className="actions">
          <SignInButton returnTo={window.location.pathname} trigger="guarded-page" />
        </p>
      </section>
    );
  }
  return (
    <section className="page" aria-busy="true">
      <p>Checking your session…</p>
    </section>
  );
}

import { useEffect, useState } from 'react';
import { useLocation } from 'wouter';
import type { AuthNotice } from './auth-state';
import { useAuth } from './auth-context';

/**
 * The redirect URI. It hands the response to the session (which processes it once), then replaces
 * this history entry so neither the address bar nor the history keeps `code` or `state`.
 */
export function CallbackPage() {
  const { completeSignIn, signIn } = useAuth();
  const [, navigate] = useLocation();
  const [failure, setFailure] = useState<AuthNotice | null>(null);

  useEffect(() => {
    const url = window.location.href;
    // Even without a query: the BFF's server comes back to a bare /callback, and only the session
    // knows whether that is an answer (a reload of a used one goes home).
    void completeSignIn(url).then((result) => {
      // The entry is cleaned first, so neither a failed navigation nor an error leaves `code` and
      // `state` in the address bar or the history.
      window.history.replaceState(null, '', '/callback');
      if (!result.ok) {
        // A new sign-in is already under way when the provider refused a scope it does not need.
        if (!('error' in result)) return;
        setFailure(result.error);
        return;
      }
      try {
        navigate(result.returnTo, { replace: true });
      } catch {
        navigate('/', { replace: true });
      }
    });
  }, [completeSignIn, navigate]);

  if (!failure) {
    return (
      <section className="page" aria-busy="true">
        <p>Signing you in…</p>
      </section>
    );
  }
  return (
    <section className="page">
      <h1>Sign-in failed</h1>
      <p role="alert" data-error-code={failure.code}>
        {failure.message}
      </p>
      <p className="actions">
        <button
          type="button"
          className="button primary"
          onClick={() => void signIn('/').catch(() => undefined)}
        >
          Try again
        </button>
        <a className="button" href="/">
          Back to home
        </a>
      </p>
    </section>
  );
}

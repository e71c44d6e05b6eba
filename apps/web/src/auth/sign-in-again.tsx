import { useAuth } from './auth-context';
import { ApiError } from './use-api';

/**
 * The way out of an API call the server refused even after a renewal: sign in again and come back
 * here. Nothing for any other error (retrying those is the caller's business).
 */
export function SignInAgain({ error }: { error: unknown }) {
  const { signIn } = useAuth();
  if (!(error instanceof ApiError) || !error.signInRequired) return null;
  const { pathname, search } = window.location;
  return (
    <button
      type="button"
      className="link-button"
      onClick={() => void signIn(`${pathname}${search}`, 'expired-session').catch(() => undefined)}
    >
      Sign in again
    </button>
  );
}

import type { SignInTrigger } from '@gatehouse/api-contract';
import { useAuth } from './auth-context';

/**
 * The one "Sign in" button (the header, the home page, a guarded page): it starts the sign-in and comes
 * back to `returnTo`. A failure to leave is shown by the session's own notice, so the click swallows it.
 */
export function SignInButton({ returnTo = '/', trigger }: { returnTo?: string; trigger?: SignInTrigger }) {
  const { signIn } = useAuth();
  return (
    <button
      type="button"
      className="button primary"
      onClick={() => void signIn(returnTo, trigger).catch(() => undefined)}
    >
      Sign in
    </button>
  );
}

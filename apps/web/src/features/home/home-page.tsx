import { Link } from 'wouter';
import { useAuth } from '../../auth/auth-context';

export function HomePage() {
  const { state, signIn } = useAuth();
  return (
    <section className="page">
      <h1>Welcome to Gatehouse</h1>
      <p className="lead">
        A foundation for browser apps that sign people in through their identity provider and report their own
        usage.
      </p>
      {state.status === 'signed-in' ? (
        <p>
          You are signed in as <strong>{state.user.name}</strong>. See{' '}
          <Link href="/profile">your profile</Link>.
        </p>
      ) : state.status === 'signed-out' ? (
        <p className="actions">
          <button
            type="button"
            className="button primary"
            onClick={() => void signIn('/').catch(() => undefined)}
          >
            Sign in
          </button>
        </p>
      ) : (
        // While the session is still unknown: neither a sign-in button nor a name (no flash of either).
        <p className="actions" aria-busy="true" />
      )}
    </section>
  );
}

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
      ) : (
        <p className="actions">
          <button
            type="button"
            className="button primary"
            disabled={state.status === 'loading'}
            onClick={() => void signIn('/').catch(() => undefined)}
          >
            Sign in
          </button>
        </p>
      )}
    </section>
  );
}

import { Link } from 'wouter';
import { useAuth } from '../../auth/auth-context';
import { SignInButton } from '../../auth/sign-in-button';
import type { PageRoute } from '../../shared/page-route';

export const route = {
  path: '/',
  name: 'Home',
  access: 'public',
  nav: { label: 'Home', order: 10 },
  eager: true,
} satisfies PageRoute;

export default function HomePage() {
  const { state } = useAuth();
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
          <SignInButton />
        </p>
      ) : (
        // While the session is still unknown: neither a sign-in button nor a name (no flash of either).
        <p className="actions" aria-busy="true" />
      )}
    </section>
  );
}

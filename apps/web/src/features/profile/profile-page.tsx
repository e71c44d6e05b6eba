import { useAuth } from '../../auth/auth-context';
import { SignInAgain } from '../../auth/sign-in-again';
import { useEndpoint } from '../../auth/api-client';
import type { PageRoute } from '../../shared/page-route';

const timeFormat = new Intl.DateTimeFormat(undefined, { timeStyle: 'medium', dateStyle: 'medium' });

export const route = {
  path: '/profile',
  name: 'Profile',
  access: 'signed-in',
  nav: { label: 'Profile', order: 20 },
} satisfies PageRoute;

export default function ProfilePage() {
  const { state } = useAuth();
  const me = useEndpoint('/me');

  if (state.status !== 'signed-in') return null;
  const { user } = state;
  return (
    <section className="page">
      <h1>Your profile</h1>
      <dl className="facts">
        <dt>Name</dt>
        <dd data-testid="profile-name">{user.name}</dd>
        <dt>Email</dt>
        <dd data-testid="profile-email">{user.email ?? '—'}</dd>
        <dt>Roles</dt>
        <dd data-testid="profile-roles">{user.roles.length ? user.roles.join(', ') : 'none'}</dd>
        <dt>Session renews</dt>
        <dd data-testid="profile-renews">
          {user.renewedByServer
            ? `by the server, until ${timeFormat.format(user.expiresAt * 1000)}`
            : user.renewsAt
              ? timeFormat.format(user.renewsAt * 1000)
              : 'not renewable: sign in again when it ends'}
        </dd>
      </dl>
      <h2>What the API sees</h2>
      <p>
        The answer of <code>GET /api/me</code>, which checks your access token on the server:
      </p>
      {me.status === 'loading' && <p aria-busy="true">Loading…</p>}
      {me.status === 'failed' && (
        <p role="alert">
          The API call failed: {me.error.message} <SignInAgain error={me.error} />
        </p>
      )}
      {me.status === 'ready' && (
        <pre className="api-answer" data-testid="api-me">
          {JSON.stringify(me.data, null, 2)}
        </pre>
      )}
    </section>
  );
}

import { mayAccess, type Access } from '@gatehouse/api-contract';
import type { ReactNode } from 'react';
import { Link, useLocation } from 'wouter';
import { useAuth } from '../auth/auth-context';
import { SignInButton } from '../auth/sign-in-button';
import { ConsentSetting } from '../telemetry/consent-banner';

/** A link of the main navigation, to a page of this access. */
export interface NavLink {
  href: string;
  label: string;
  access: Access;
}

/**
 * Whether the navigation offers a link: to whoever mayAccess lets open the page, and to a signed-out
 * visitor (or a session not known yet) when signing in would open it to anyone, as the page's guard sends
 * them through sign-in. Links to what only some accounts may open wait until the user is known.
 */
const offers = (access: Access, user: { roles: readonly string[] } | null) =>
  mayAccess(access, user ?? { roles: [] });

export function Layout({ navigation, children }: { navigation: NavLink[]; children: ReactNode }) {
  return (
    <>
      <header className="topbar">
        <Link href="/" className="brand">
          Gatehouse
        </Link>
        <MainNav links={navigation} />
        <AccountArea />
      </header>
      <SessionNotice />
      <main>{children}</main>
      <footer className="footer">
        <ConsentSetting />
      </footer>
    </>
  );
}

function MainNav({ links }: { links: NavLink[] }) {
  const { state } = useAuth();
  const user = state.status === 'signed-in' ? state.user : null;
  return (
    <nav aria-label="Main">
      {links
        .filter(({ access }) => offers(access, user))
        .map(({ href, label }) => (
          <Link key={href} href={href}>
            {label}
          </Link>
        ))}
    </nav>
  );
}

function AccountArea() {
  const { state, signOut } = useAuth();
  const [, navigate] = useLocation();
  if (state.status === 'loading') return <div className="account" aria-busy="true" />;
  if (state.status === 'signing-out') {
    return (
      <div className="account" aria-busy="true">
        <span className="who">Signing out…</span>
      </div>
    );
  }
  if (state.status === 'signed-out') {
    return (
      <div className="account">
        <SignInButton />
      </div>
    );
  }
  return (
    <div className="account">
      <span className="who" data-testid="display-name">
        {state.user.name}
      </span>
      <button
        type="button"
        className="button"
        // Signed out here (no end-session endpoint at the provider): the home page says what that means.
        onClick={() => void signOut().then((outcome) => outcome === 'signed-out' && navigate('/'))}
      >
        Sign out
      </button>
    </div>
  );
}

/** Codes that end an existing session; every other notice is a sign-in attempt that failed. */
const sessionEndings = new Set([
  'renewal_failed',
  'session_expired',
  'signed_out_elsewhere',
  'provider_session_remains',
]);

/** Why the user is signed out, when there is a reason worth telling (renewal failed, provider down). */
function SessionNotice() {
  const { state } = useAuth();
  if (state.status !== 'signed-out' || !state.notice || window.location.pathname === '/callback') return null;
  const { code, message } = state.notice;
  return (
    <div className="notice" role="status" data-error-code={code}>
      {sessionEndings.has(code) ? message : `Sign-in failed. ${message}`}
    </div>
  );
}

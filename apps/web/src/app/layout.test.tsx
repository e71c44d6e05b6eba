import type * as apiContract from '@gatehouse/api-contract';
import { accessLevels, mayAccess } from '@gatehouse/api-contract';
import { cleanup, render, screen } from '@testing-library/react';
import type { ReactNode } from 'react';
import { describe, expect, it, vi } from 'vitest';
import { AuthProvider } from '../auth/auth-context';
import type { AuthState } from '../auth/auth-state';
import { fakeSession } from '../auth/fake-session';
import { RequireAuth } from '../auth/require-auth';
import { Layout, type NavLink } from './layout';

/** mayAccess as the contract has it, unless a test swaps in another rule to see the SPA follow it. */
const rule = vi.hoisted(() => ({ swapped: undefined as undefined | typeof mayAccess }));
vi.mock('@gatehouse/api-contract', async (importOriginal) => {
  const contract = await importOriginal<typeof apiContract>();
  const asked: typeof mayAccess = (access, caller) => (rule.swapped ?? contract.mayAccess)(access, caller);
  return { ...contract, mayAccess: asked };
});

const links: NavLink[] = [
  { href: '/', label: 'Home', access: 'public' },
  { href: '/profile', label: 'Profile', access: 'signed-in' },
  { href: '/reports', label: 'Reports', access: 'admin' },
];

function renderFor(state: AuthState, navigation = links, children: ReactNode = 'page') {
  const session = fakeSession(state);
  render(
    <AuthProvider loadSession={() => Promise.resolve(session)}>
      <Layout navigation={navigation}>{children}</Layout>
    </AuthProvider>,
  );
}

const user = (roles: string[]): AuthState => ({
  status: 'signed-in',
  user: { issuer: 'i', sub: 's', name: 'Ann', email: undefined, roles, expiresAt: 0, renewsAt: null },
});

const navLinks = () =>
  Array.from(screen.getByRole('navigation', { name: 'Main' }).querySelectorAll('a'), (a) => [
    a.textContent,
    a.getAttribute('href'),
  ]);

describe('the main navigation', () => {
  it('shows the links it is given, in order, an admin one only to users who hold the role', async () => {
    renderFor(user(['admin']));
    await screen.findByText('Ann');
    expect(navLinks()).toEqual([
      ['Home', '/'],
      ['Profile', '/profile'],
      ['Reports', '/reports'],
    ]);
  });

  it('leaves out an admin link for users without the role', async () => {
    renderFor(user(['member']));
    await screen.findByText('Ann');
    expect(navLinks().map(([label]) => label)).toEqual(['Home', 'Profile']);
  });

  it('offers signed-out visitors the links signing in opens to anyone, not the admin ones', async () => {
    renderFor({ status: 'signed-out' });
    await screen.findByRole('button', { name: 'Sign in' });
    expect(navLinks().map(([label]) => label)).toEqual(['Home', 'Profile']);
  });
});

/** Signed out, or signed in with these roles. */
const callers: Record<string, readonly string[] | null> = {
  'signed-out': null,
  'no-role': [],
  member: ['member'],
  admin: ['admin'],
  'member-admin': ['member', 'admin'],
};

/**
 * For every caller, a page of every access level behind the guard and a link to each: which pages the
 * guard showed and which links the navigation offered, against what mayAccess implies.
 */
async function decisions() {
  const seen: string[] = [];
  const implied: string[] = [];
  for (const [name, roles] of Object.entries(callers)) {
    const navigation = accessLevels.map((access) => ({ href: `/${access}`, label: access, access }));
    const pages = accessLevels.map((access) => (
      <RequireAuth key={access} access={access}>
        <p>page for {access}</p>
      </RequireAuth>
    ));
    renderFor(roles ? user([...roles]) : { status: 'signed-out' }, navigation, pages);
    await (roles ? screen.findByText('Ann') : screen.findByRole('button', { name: 'Sign in' }));
    const offered = navLinks().map(([label]) => label);
    for (const access of accessLevels) {
      const page = screen.queryByText(`page for ${access}`) !== null;
      seen.push(`${access} for ${name}: page ${page}, link ${offered.includes(access)}`);
      // A signed-out visitor is offered what signing in opens to anyone: the guard sends them through it.
      const link = mayAccess(access, { roles: roles ?? [] });
      implied.push(`${access} for ${name}: page ${mayAccess(access, roles && { roles })}, link ${link}`);
    }
    cleanup();
  }
  return { seen, implied };
}

/** Not Gatehouse's rule: signed-in pages for members only, admin pages for anyone signed in. */
const anotherRule: typeof mayAccess = (access, caller) =>
  access === 'public' || (access === 'admin' ? caller !== null : (caller?.roles.includes('member') ?? false));

describe('the guard and the navigation ask mayAccess', () => {
  it.each([
    ["Gatehouse's rule", undefined],
    ['another rule', anotherRule],
  ])('show a page and offer its link as mayAccess says, under %s', async (_, swapped) => {
    rule.swapped = swapped;
    const { seen, implied } = await decisions().finally(() => (rule.swapped = undefined));
    expect(seen).toEqual(implied);
  });
});

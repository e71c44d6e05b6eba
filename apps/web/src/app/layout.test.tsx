import { render, screen } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import { AuthProvider } from '../auth/auth-context';
import type { AuthSession, AuthState } from '../auth/auth-state';
import { Layout, type NavLink } from './layout';

const links: NavLink[] = [
  { href: '/', label: 'Home' },
  { href: '/profile', label: 'Profile' },
  { href: '/reports', label: 'Reports', role: 'analyst' },
];

function renderFor(state: AuthState) {
  const session = {
    getState: () => state,
    subscribe: () => () => {},
    signIn: vi.fn(),
    signOut: vi.fn(),
    completeSignIn: vi.fn(),
    getAccessToken: () => Promise.resolve(null),
  } as unknown as AuthSession;
  render(
    <AuthProvider loadSession={() => Promise.resolve(session)}>
      <Layout navigation={links}>page</Layout>
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
  it('shows the links it is given, in order, a role-bound one only to users who hold the role', async () => {
    renderFor(user(['analyst']));
    await screen.findByText('Ann');
    expect(navLinks()).toEqual([
      ['Home', '/'],
      ['Profile', '/profile'],
      ['Reports', '/reports'],
    ]);
  });

  it('leaves out a role-bound link for users without the role', async () => {
    renderFor(user(['member']));
    await screen.findByText('Ann');
    expect(navLinks().map(([label]) => label)).toEqual(['Home', 'Profile']);
  });

  it('leaves out a role-bound link for signed-out visitors', async () => {
    renderFor({ status: 'signed-out' });
    await screen.findByRole('button', { name: 'Sign in' });
    expect(navLinks().map(([label]) => label)).toEqual(['Home', 'Profile']);
  });
});

import { vi } from 'vitest';
import type { AuthSession, AuthState, CallbackResult } from './auth-state';

/**
 * An AuthSession for the SPA's unit tests that stays in `state`, its actions spies: what a component
 * under test asks of the session, without a provider or a vault. `overrides` replaces any part.
 */
export function fakeSession(state: AuthState, overrides: Partial<AuthSession> = {}): AuthSession {
  return {
    getState: () => state,
    subscribe: () => () => {},
    signIn: vi.fn(() => Promise.resolve()),
    signOut: vi.fn(() => Promise.resolve('leaving' as const)),
    completeSignIn: vi.fn(() => Promise.resolve<CallbackResult>({ ok: true, returnTo: '/' })),
    fetchApi: vi.fn(() => Promise.reject(new Error('No API in these tests.'))),
    renew: vi.fn(() => Promise.resolve(false)),
    ...overrides,
  };
}

import { act, render, screen } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { AuthProvider } from '../../../auth/auth-context';
import type { AuthSession } from '../../../auth/auth-state';
import { panelProps } from '../test-panel-props';
import type { SignInHealth } from '../usage-api';
import SignInAlertPanel from './sign-in-alert-panel';
import SignInPanel from './sign-in-panel';

const EVERY = 60_000;
const health: SignInHealth = {
  range: '24h',
  from: '2026-11-22T00:00:00Z',
  to: '2026-11-23T00:00:00Z',
  bucketMs: 3_600_000,
  funnel: { started: 10, returned: 9, redeemed: 9, signedIn: 2, failed: 7 },
  successRate: 2 / 9,
  previousSuccessRate: 0.9,
  change: 2 / 9 - 0.9,
  timeToSignIn: { p50Ms: 800, p95Ms: 1500 },
  failures: [{ reason: 'provider_error', step: 'provider', count: 7 }],
  renewals: [{ start: '2026-11-22T00:00:00Z', succeeded: 1, failed: 0, forcedSignIn: 0 }],
  sessionEnds: [],
  refusals: [],
  alert: {
    raised: true,
    lastHour: { ended: 8, failed: 7, rate: 7 / 8 },
    weekBefore: { ended: 100, failed: 2, rate: 0.02 },
  },
  estimates: [],
};

/** A signed-in session whose vault answers the API's calls from the fetch stubbed below. */
const signedIn = { status: 'signed-in', user: { sub: 'admin' } };
const session = {
  getState: () => signedIn,
  subscribe: () => () => {},
  fetchApi: async ({ url }: { url: string }) => {
    const { pathname, search } = new URL(url);
    const response = await (fetch as unknown as (path: string) => Promise<Response>)(`${pathname}${search}`);
    return {
      status: response.status,
      statusText: '',
      headers: [...response.headers],
      body: await response.text(),
    };
  },
  renew: () => Promise.resolve(true),
} as unknown as AuthSession;

describe('the sign-in alert and the Sign-in panel, shown together', () => {
  const fetchMock = vi.fn((_path: string) => Promise.resolve(Response.json(health)));
  const signInRequests = () =>
    fetchMock.mock.calls.filter(([path]) => path.startsWith('/api/usage/sign-in?')).length;

  beforeEach(() => {
    fetchMock.mockClear();
    vi.stubGlobal('fetch', fetchMock);
    // Only the refresh timers: the promises and Testing Library's own waits keep real time.
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.unstubAllGlobals();
  });

  it('ask /api/usage/sign-in once per refresh, not once per panel', async () => {
    const props = panelProps({}, { every: EVERY });
    render(
      <AuthProvider loadSession={() => Promise.resolve(session)}>
        <SignInAlertPanel {...props} />
        <SignInPanel {...props} />
      </AuthProvider>,
    );
    // Both show the answer: the overview's alert, and the same alert atop the Sign-in section.
    expect(await screen.findAllByTestId('sign-in-alert')).toHaveLength(2);
    expect(screen.getByTestId('sign-in-funnel').textContent).toContain('Failed: 7');
    expect(signInRequests()).toBe(1);

    await act(async () => {
      vi.advanceTimersByTime(EVERY);
      await Promise.resolve();
    });
    await vi.waitFor(() => expect(signInRequests()).toBeGreaterThan(1));
    expect(signInRequests()).toBe(2);
  });
});

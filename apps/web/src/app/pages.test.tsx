import { act, cleanup, render, screen } from '@testing-library/react';
import { lazy } from 'react';
import { Router } from 'wouter';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthProvider } from '../auth/auth-context';
import { fakeSession } from '../auth/fake-session';
import { Pages } from './app';
import { useTimedLocation } from './navigation-clock';

afterEach(() => {
  cleanup();
  window.history.replaceState(null, '', '/');
});

const signedOut = fakeSession({ status: 'signed-out' });

/** A page whose code arrives when the test says so, as a lazy page's chunk does. */
function slowPage() {
  let arrive = () => {};
  const Page = lazy(
    () =>
      new Promise<{ default: () => React.JSX.Element }>((resolve) => {
        arrive = () => resolve({ default: () => <h1>Reports</h1> });
      }),
  );
  return { Page, arrive: () => arrive() };
}

function renderPages(routes: Parameters<typeof Pages>[0]['routes']) {
  const loadingShown: string[] = [];
  const observer = new MutationObserver(() => {
    if (document.body.textContent.includes('Loading…')) loadingShown.push(window.location.pathname);
  });
  observer.observe(document.body, { childList: true, subtree: true, characterData: true });
  render(
    <AuthProvider loadSession={() => Promise.resolve(signedOut)}>
      <Router hook={useTimedLocation}>
        <Pages routes={routes} />
      </Router>
    </AuthProvider>,
  );
  return loadingShown;
}

describe('moving to a page whose code has not loaded yet', () => {
  it('keeps the page before on screen until the new one can show, with no "Loading…" between', async () => {
    const slow = slowPage();
    const loadingShown = renderPages([
      { path: '/', access: 'public', element: <h1>Home</h1> },
      { path: '/reports', access: 'public', element: <slow.Page /> },
    ]);
    expect(screen.getByRole('heading').textContent).toBe('Home');

    await act(async () => {
      window.history.pushState(null, '', '/reports');
      await new Promise((resolve) => setTimeout(resolve, 50));
    });
    // The code has not arrived: the page before is still what the user sees.
    expect(screen.getByRole('heading').textContent).toBe('Home');

    act(() => slow.arrive());
    expect((await screen.findByRole('heading', { name: 'Reports' })).textContent).toBe('Reports');
    expect(screen.queryByText('Home')).toBeNull();
    expect(loadingShown).toEqual([]);
  });

  it('shows "Loading…" where there is no page before it (the first page of a visit)', async () => {
    window.history.replaceState(null, '', '/reports');
    const slow = slowPage();
    const loadingShown = renderPages([{ path: '/reports', access: 'public', element: <slow.Page /> }]);
    expect(screen.getByText('Loading…')).toBeDefined();
    act(() => slow.arrive());
    await screen.findByRole('heading', { name: 'Reports' });
    expect(loadingShown).toContain('/reports');
  });
});

import { act, render } from '@testing-library/react';
import { StrictMode, useEffect } from 'react';
import { Router, useLocation } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { telemetry } from '../telemetry/telemetry';
import { RouteTracking } from './route-tracking';

const routes = [
  { path: '/', name: 'Home' },
  { path: '/profile', name: 'Profile' },
  { path: '/users/:id', name: 'User' },
];

beforeEach(() => {
  vi.useFakeTimers();
  vi.stubGlobal('requestAnimationFrame', () => 0);
});
afterEach(() => {
  vi.useRealTimers();
  vi.unstubAllGlobals();
});

/** What happened, in order: operations started, and the pages' own effects (where they call the API). */
const happened: string[] = [];

/** A page, after RouteTracking in the tree as in app.tsx, whose effect runs when its address changes. */
function Page() {
  const [path] = useLocation();
  useEffect(() => void happened.push(`page effect ${path}`), [path]);
  return null;
}

function renderAt(path: string) {
  happened.length = 0;
  const location = memoryLocation({ path });
  const track = vi.spyOn(telemetry, 'trackPageView').mockImplementation(() => {});
  const operation = vi
    .spyOn(telemetry, 'startOperation')
    .mockImplementation((name) => void happened.push(`operation ${name}`));
  render(
    <StrictMode>
      <Router hook={location.hook}>
        <RouteTracking routes={routes} fallbackName="Not found" />
        <Page />
      </Router>
    </StrictMode>,
  );
  const settle = () => act(() => vi.advanceTimersByTimeAsync(200));
  return { location, track, operation, settle };
}

describe('RouteTracking', () => {
  it('reports one page view per path change, named after its route, even under StrictMode', async () => {
    const { location, track, settle } = renderAt('/');
    await settle();
    act(() => location.navigate('/profile'));
    await settle();
    act(() => location.navigate('/users/42'));
    await settle();
    act(() => location.navigate('/nowhere'));
    await settle();
    expect(track.mock.calls.map(([name]) => name)).toEqual(['Home', 'Profile', 'User', 'Not found']);
    for (const [, , duration] of track.mock.calls) expect(duration).toBeGreaterThanOrEqual(0);
  });

  it('never reports the sign-in callback, and a replace to the same path is no new view', async () => {
    const { location, track, settle } = renderAt('/callback');
    await settle();
    expect(track).not.toHaveBeenCalled();
    act(() => location.navigate('/profile', { replace: true }));
    await settle();
    act(() => location.navigate('/profile', { replace: true }));
    await settle();
    expect(track.mock.calls.map(([name]) => name)).toEqual(['Profile']);
  });

  it("starts an operation for each page after the load's first, before the page's own effects", async () => {
    const { location, operation, settle } = renderAt('/');
    await settle();
    expect(operation).not.toHaveBeenCalled();
    act(() => location.navigate('/profile'));
    await settle();
    act(() => location.navigate('/users/42'));
    await settle();
    expect(operation.mock.calls.map(([name]) => name)).toEqual(['Profile', 'User']);
    expect(happened.filter((event) => !event.endsWith(' /'))).toEqual([
      'operation Profile',
      'page effect /profile',
      'operation User',
      'page effect /users/42',
    ]);
  });

  it("keeps the page load's operation for the first page after the sign-in callback", async () => {
    const { location, operation, settle } = renderAt('/callback');
    await settle();
    act(() => location.navigate('/', { replace: true }));
    await settle();
    expect(operation).not.toHaveBeenCalled();
    act(() => location.navigate('/profile'));
    await settle();
    expect(operation.mock.calls.map(([name]) => name)).toEqual(['Profile']);
  });
});

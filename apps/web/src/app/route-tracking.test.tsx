import { act, render } from '@testing-library/react';
import { StrictMode } from 'react';
import { Router } from 'wouter';
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

function renderAt(path: string) {
  const location = memoryLocation({ path });
  const track = vi.spyOn(telemetry, 'trackPageView').mockImplementation(() => {});
  render(
    <StrictMode>
      <Router hook={location.hook}>
        <RouteTracking routes={routes} fallbackName="Not found" />
      </Router>
    </StrictMode>,
  );
  const settle = () => act(() => vi.advanceTimersByTimeAsync(200));
  return { location, track, settle };
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
});

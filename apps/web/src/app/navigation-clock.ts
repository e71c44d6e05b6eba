import { useDeferredValue } from 'react';
import { navigate as browserNavigate, useBrowserLocation } from 'wouter/use-browser-location';

/**
 * When the current route was entered, in `performance.now()` time: 0 for the page load (the
 * navigation start), else the moment of the last in-app navigation or back/forward.
 */
let enteredAt = 0;

export function routeEnteredAt(): number {
  return enteredAt;
}

const navigate: typeof browserNavigate = (to, options) => {
  enteredAt = performance.now();
  browserNavigate(to, options);
};

if (typeof window !== 'undefined') {
  window.addEventListener('popstate', () => {
    enteredAt = performance.now();
  });
}

/**
 * wouter's browser location, with navigations timed: pass it as `<Router hook={...}>`. wouter calls it
 * with the router's options, whose `ssrPath` is the address of a render with no browser (the first
 * render made at build time, first-render.tsx).
 *
 * The address the app renders is deferred (React's useDeferredValue): a new address is rendered in the
 * background, and where that render waits for a page's code (its first visit), the page before stays
 * on screen until the new one can show, rather than a "Loading…" that React keeps for at least 300 ms
 * (app.tsx's Pages).
 */
export function useTimedLocation(options?: { ssrPath?: string | undefined }): [string, typeof navigate] {
  const [location] = useBrowserLocation(
    options?.ssrPath === undefined ? undefined : { ssrPath: options.ssrPath },
  );
  return [useDeferredValue(location), navigate];
}

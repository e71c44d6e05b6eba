import { useEffect, useRef } from 'react';
import { matchRoute, useLocation, useRouter } from 'wouter';
import { afterFirstPaint, afterNextFrame } from '../shared/after-first-paint';
import { telemetry } from '../telemetry/telemetry';
import { routeEnteredAt } from './navigation-clock';

export interface NamedRoute {
  path: string;
  /** The page view's name, e.g. "Profile". */
  name: string;
}

/**
 * One page view per route change, named after the route, with a real duration: for the first page,
 * from the start of the navigation to the frame after it rendered; for later ones, from the route
 * change to that frame. (Giving the SDK the duration also sends the view at once, rather than after it
 * waits for the navigation timing.) Paths without a name (the sign-in callback) are never tracked, and
 * a re-render on the same path (StrictMode, a `replace` that keeps the route) is not a new page view.
 * Each page after the load's first starts an operation of its own before the page's effects run (its
 * calls), as the SDK's own route tracking would; the first keeps the page load's.
 */
export function RouteTracking({ routes, fallbackName }: { routes: NamedRoute[]; fallbackName: string }) {
  const [path] = useLocation();
  const { parser } = useRouter();
  const lastPath = useRef<string | null>(null);
  const viewed = useRef(false);

  useEffect(() => {
    if (lastPath.current === path) return;
    lastPath.current = path;
    if (path.startsWith('/callback')) return;
    const name = routes.find((route) => matchRoute(parser, route.path, path)[0])?.name ?? fallbackName;
    // This effect runs before the page's own (RouteTracking comes before the pages in the tree).
    if (viewed.current) telemetry.startOperation(name);
    viewed.current = true;
    const enteredAt = routeEnteredAt();
    // The page load is timed to its first contentful paint; a route change to the next painted frame.
    const whenShown = enteredAt === 0 ? afterFirstPaint : afterNextFrame;
    whenShown(() => {
      telemetry.trackPageView(name, window.location.href, Math.round(performance.now() - enteredAt));
    });
  }, [path, parser, routes, fallbackName]);

  return null;
}

import { Suspense, type ReactElement } from 'react';
import { pages } from 'virtual:gatehouse-pages';
import { Route, Router, Switch } from 'wouter';
import { AuthProvider } from '../auth/auth-context';
import { CallbackPage } from '../auth/callback-page';
import { RequireAuth } from '../auth/require-auth';
import { ConsentBanner } from '../telemetry/consent-banner';
import { ErrorBoundary } from './error-boundary';
import { Layout, type NavLink } from './layout';
import { useTimedLocation } from './navigation-clock';
import type { PageRoute } from '../shared/page-route';
import { NotFoundPage } from './not-found-page';
import { RouteTracking } from './route-tracking';
import { TelemetryUser } from './telemetry-user';

/**
 * Every page, in one table made from the pages themselves (pages-plugin.ts, ADR 0091): a `*-page.tsx` file
 * under features/ exports its component and its `route` (path, page view name, `access`, `nav` link). Pages
 * load on demand, so the public home page (marked `eager`) never pays for the others.
 */
const routes = pages.map(({ Page, ...route }) => ({ ...route, element: <Page /> }));

/** The main navigation: the routes that have a link, from the same table. */
export const navigation: NavLink[] = routes
  .flatMap(({ path, nav, access }) =>
    nav ? [{ href: path, label: nav.label, order: nav.order, access }] : [],
  )
  .sort((a, b) => a.order - b.order)
  .map(({ order: _order, ...link }) => link);

/**
 * The one place features are composed: a feature is its own folder, its pages join the table above. `ssrPath`: the
 * address of a render made with no browser (the first render, made at build time: first-render.tsx).
 */
export function App({ ssrPath }: { ssrPath?: string } = {}) {
  return (
    <ErrorBoundary boundary="root">
      <Router hook={useTimedLocation} {...(ssrPath === undefined ? {} : { ssrPath })}>
        <AuthProvider>
          <RouteTracking routes={routes} fallbackName="Not found" />
          <TelemetryUser />
          <Layout navigation={navigation}>
            <Pages routes={routes} />
          </Layout>
          <ConsentBanner />
        </AuthProvider>
      </Router>
    </ErrorBoundary>
  );
}

/**
 * The page the address names, each in its own error boundary, all in one Suspense boundary. A page's
 * code loads on its first visit: the address the pages follow is deferred (useTimedLocation), so that
 * while it loads the page before stays on screen, and the new one shows as soon as its code is there.
 * A Suspense boundary of its own per page would show "Loading…" instead, and React then reveals the
 * page no sooner than 300 ms after that fallback (its throttle), whatever the code's load took.
 */
export function Pages({
  routes,
}: {
  routes: (Pick<PageRoute, 'path' | 'access'> & { element: ReactElement })[];
}) {
  return (
    <Suspense
      fallback={
        <section className="page" aria-busy="true">
          <p>Loading…</p>
        </section>
      }
    >
      <Switch>
        {routes.map((route) => (
          <Route key={route.path} path={route.path}>
            <ErrorBoundary boundary="route">
              <RequireAuth access={route.access}>{route.element}</RequireAuth>
            </ErrorBoundary>
          </Route>
        ))}
        <Route path="/callback">
          <CallbackPage />
        </Route>
        <Route>
          <NotFoundPage />
        </Route>
      </Switch>
    </Suspense>
  );
}

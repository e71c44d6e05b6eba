import { Suspense, type ReactNode } from 'react';
import { pages } from 'virtual:gatehouse-pages';
import { Route, Router, Switch } from 'wouter';
import { AuthProvider } from '../auth/auth-context';
import { CallbackPage } from '../auth/callback-page';
import { RequireAuth } from '../auth/require-auth';
import { ConsentBanner } from '../telemetry/consent-banner';
import { ErrorBoundary } from './error-boundary';
import { Layout, type NavLink } from './layout';
import { useTimedLocation } from './navigation-clock';
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
            <Switch>
              {routes.map((route) => (
                <Route key={route.path} path={route.path}>
                  <RouteBoundary>
                    <RequireAuth access={route.access}>{route.element}</RequireAuth>
                  </RouteBoundary>
                </Route>
              ))}
              <Route path="/callback">
                <CallbackPage />
              </Route>
              <Route>
                <NotFoundPage />
              </Route>
            </Switch>
          </Layout>
          <ConsentBanner />
        </AuthProvider>
      </Router>
    </ErrorBoundary>
  );
}

function RouteBoundary({ children }: { children: ReactNode }) {
  return (
    <ErrorBoundary boundary="route">
      <Suspense
        fallback={
          <section className="page" aria-busy="true">
            <p>Loading…</p>
          </section>
        }
      >
        {children}
      </Suspense>
    </ErrorBoundary>
  );
}

import { roleFor, type Access } from '@gatehouse/api-contract';
import { lazy, Suspense, type ReactNode } from 'react';
import { Route, Router, Switch } from 'wouter';
import { AuthProvider } from '../auth/auth-context';
import { CallbackPage } from '../auth/callback-page';
import { RequireAuth } from '../auth/require-auth';
import { HomePage } from '../features/home/home-page';
import { ConsentBanner } from '../telemetry/consent-banner';
import { ErrorBoundary } from './error-boundary';
import { Layout, type NavLink } from './layout';
import { useTimedLocation } from './navigation-clock';
import { NotFoundPage } from './not-found-page';
import { RouteTracking, type NamedRoute } from './route-tracking';
import { TelemetryUser } from './telemetry-user';

// Protected features load on demand: the public home page never pays for them.
const ProfilePage = lazy(() => import('../features/profile/profile-page'));
const DiagnosticsPage = lazy(() => import('../features/diagnostics/diagnostics-page'));
const UsagePage = lazy(() => import('../features/usage/usage-page'));
const SessionPage = lazy(() => import('../features/usage/session-page'));

interface AppRoute extends NamedRoute {
  element: ReactNode;
  /**
   * Who may open it, as the API's endpoints say it (the contract's rule: roleFor, mayAccess): signed-out
   * visitors of a signed-in or admin page go through sign-in and come back; its link shows only to those
   * who may open it.
   */
  access: Access;
  /** Its link's text in the main navigation (shown to whoever may open it), in the table's order. */
  nav?: string;
}

/** Every page, in one table: its path, the name its page views carry, and what it shows. */
const routes: AppRoute[] = [
  { path: '/', name: 'Home', element: <HomePage />, access: 'public', nav: 'Home' },
  { path: '/profile', name: 'Profile', element: <ProfilePage />, access: 'signed-in', nav: 'Profile' },
  { path: '/usage', name: 'Usage', element: <UsagePage />, access: 'admin', nav: 'Usage' },
  {
    path: '/diagnostics',
    name: 'Diagnostics',
    element: <DiagnosticsPage />,
    access: 'admin',
    nav: 'Diagnostics',
  },
  { path: '/usage/sessions/:id', name: 'Usage session', element: <SessionPage />, access: 'admin' },
];

/** The main navigation: the routes that have a link, from the same table. */
export const navigation: NavLink[] = routes.flatMap(({ path, nav, access }) => {
  const role = roleFor(access);
  return nav ? [{ href: path, label: nav, ...(role ? { role } : {}) }] : [];
});

/**
 * The one place features are composed: add a feature in its own folder and a row above. `ssrPath`: the
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
                    {route.access === 'public' ? (
                      route.element
                    ) : (
                      <RequireAuth role={roleFor(route.access)}>{route.element}</RequireAuth>
                    )}
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

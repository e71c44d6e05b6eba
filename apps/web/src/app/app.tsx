import { lazy, Suspense } from 'react';
import { Route, Switch } from 'wouter';
import { AuthProvider } from '../auth/auth-context';
import { CallbackPage } from '../auth/callback-page';
import { RequireAuth } from '../auth/require-auth';
import { HomePage } from '../features/home/home-page';
import { ErrorBoundary } from './error-boundary';
import { Layout } from './layout';
import { NotFoundPage } from './not-found-page';

// Protected features load on demand: the public home page never pays for them.
const ProfilePage = lazy(() => import('../features/profile/profile-page'));

/** Routes are the one place features are composed; add a feature here and in its own folder. */
export function App() {
  return (
    <ErrorBoundary>
      <AuthProvider>
        <Layout>
          <Switch>
            <Route path="/">
              <RouteBoundary>
                <HomePage />
              </RouteBoundary>
            </Route>
            <Route path="/callback">
              <CallbackPage />
            </Route>
            <Route path="/profile">
              <RouteBoundary>
                <RequireAuth>
                  <ProfilePage />
                </RequireAuth>
              </RouteBoundary>
            </Route>
            <Route>
              <NotFoundPage />
            </Route>
          </Switch>
        </Layout>
      </AuthProvider>
    </ErrorBoundary>
  );
}

function RouteBoundary({ children }: { children: React.ReactNode }) {
  return (
    <ErrorBoundary>
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

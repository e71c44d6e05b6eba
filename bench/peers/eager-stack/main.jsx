// The usual eager stack, everything in the first chunk: React Router 7, react-oidc-context (UserManager)
// and Application Insights with its React plugin, initialised before the first render; telemetry goes to
// the benchmark's page server.
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { BrowserRouter, Route, Routes } from 'react-router';
import { AuthProvider, useAuth } from 'react-oidc-context';
import { ApplicationInsights } from '@microsoft/applicationinsights-web';
import { AppInsightsContext, ReactPlugin } from '@microsoft/applicationinsights-react-js';
import { clientSettings } from '../client-settings.js';

const reactPlugin = new ReactPlugin();
const appInsights = new ApplicationInsights({
  config: {
    connectionString: `InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=${location.origin}/`,
    extensions: [reactPlugin],
    enableAutoRouteTracking: true,
  },
});
appInsights.loadAppInsights();

const oidc = {
  ...clientSettings,
  onSigninCallback: () => window.history.replaceState({}, document.title, '/'),
};

function Account() {
  const auth = useAuth();
  if (auth.isLoading) return null;
  if (auth.user)
    return <span data-testid="display-name">{auth.user.profile.name ?? auth.user.profile.sub}</span>;
  return (
    <button type="button" onClick={() => void auth.signinRedirect()}>
      Sign in
    </button>
  );
}

function Home() {
  return <h1>Hello, world</h1>;
}

createRoot(document.getElementById('root')).render(
  <StrictMode>
    <AppInsightsContext.Provider value={reactPlugin}>
      <AuthProvider {...oidc}>
        <BrowserRouter>
          <header>
            <Account />
          </header>
          <main>
            <Routes>
              <Route path="/" element={<Home />} />
              <Route path="/callback" element={<Home />} />
            </Routes>
          </main>
        </BrowserRouter>
      </AuthProvider>
    </AppInsightsContext.Provider>
  </StrictMode>,
);

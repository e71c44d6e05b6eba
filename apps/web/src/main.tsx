// First: on the redirect URI it hands the code to the token vault before the rest is evaluated.
import './auth/start-on-callback';
import { StrictMode } from 'react';
import { createRoot, hydrateRoot } from 'react-dom/client';
import { App } from './app/app';
import { afterSessionLoaded, loadSessionEarlyOnCallback } from './auth/auth-context';
import { afterAddressChange, afterFirstPaint, afterNextFrame } from './shared/after-first-paint';
import { telemetry } from './telemetry/telemetry';
import './app/styles.css';

loadSessionEarlyOnCallback();
telemetry.start(
  () =>
    import('./config/runtime-config').then(({ readRuntimeConfig }) => {
      const { telemetry: settings, oidc } = readRuntimeConfig();
      return { ...settings, providerUrl: oidc.authority };
    }),
  // The HTML paints at once, so on the sign-in callback the SDK would load while the code is redeemed:
  // there it waits until the page has taken the code out of its address, and the signed-in page has
  // had its frame. Elsewhere it waits for the first paint and the session, so a click on "Sign in"
  // right after the paint does not wait for the SDK's start.
  window.location.pathname === '/callback'
    ? (task) => afterAddressChange(() => afterNextFrame(task))
    : (task) => afterFirstPaint(() => afterSessionLoaded(task)),
);

const root = document.getElementById('root');
if (!root) throw new Error('index.html has no #root element.');

const app = (
  <StrictMode>
    <App />
  </StrictMode>
);
// On `/` the HTML holds this very render (index.html): React adopts it, so what was painted before the
// script ran stays, node for node. Elsewhere the HTML has the header alone, and React replaces it.
if (window.location.pathname === '/' && root.querySelector('main > section')) hydrateRoot(root, app);
else createRoot(root).render(app);

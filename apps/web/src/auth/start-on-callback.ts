import { configuredMode, startBrowserVault } from './create-auth-session';

/*
 * Imported first by main.tsx, so that on the redirect URI this runs before the rest of the page's script
 * is evaluated (React, the app): the vault's worker is asked for and handed the code then, rather than
 * once the whole script has run. The code's exchange is that page's critical path.
 */
if (window.location.pathname === '/callback' && configuredMode() === 'browser') startBrowserVault();

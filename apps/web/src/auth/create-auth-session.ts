import type { AuthSession } from './auth-state';
import { redeemEarly } from './pending-sign-in';
import { WorkerVault } from './vault-client';

/**
 * The mode the server wrote into the page (`oidc.mode`), read without the configuration's schema, so
 * that the session's chunk is asked for at once: each session validates the whole configuration itself
 * (an invalid one is the browser session's `config_invalid` notice).
 */
function configuredMode(): 'browser' | 'bff' {
  try {
    const raw: unknown = JSON.parse(document.getElementById('gatehouse-config')?.textContent ?? '');
    const oidc = (raw as { oidc?: { mode?: unknown } } | null)?.oidc;
    return oidc?.mode === 'bff' ? 'bff' : 'browser';
  } catch {
    return 'browser';
  }
}

/**
 * The session the runtime configuration asks for, each mode in a chunk of its own: `browser`, the token
 * vault's (oidc-session.ts, with oidc-client-ts and jose); `bff`, the server's (bff-session.ts, a few
 * fetches). A page loads only its own mode's code (ADR 0120).
 */
export async function createAuthSession(): Promise<AuthSession> {
  if (configuredMode() === 'bff') {
    const [{ createBffSession }, { readRuntimeConfig }] = await Promise.all([
      import('./bff-session'),
      import('../config/runtime-config'),
    ]);
    let config;
    try {
      config = readRuntimeConfig().oidc;
    } catch {
      return (await import('./oidc-session')).createAuthSession();
    }
    return createBffSession(config);
  }
  // The vault's worker starts now, beside the session's chunk rather than after it: its script, the
  // configuration it reads and the provider's discovery take about as long as the chunk, and a sign-in
  // waits for both.
  const vault = typeof Worker === 'function' ? new WorkerVault() : undefined;
  // On the redirect URI the code goes to the vault now too, while the chunk loads.
  const early = vault && redeemEarly(vault, window.location.href, window.sessionStorage);
  return (await import('./oidc-session')).createAuthSession(vault, early);
}

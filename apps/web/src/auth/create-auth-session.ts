import type { AuthSession } from './auth-state';
import { redeemEarly, type EarlyRedeem } from './pending-sign-in';
import { WorkerVault } from './vault-client';

/**
 * The mode the server wrote into the page (`oidc.mode`), read without the configuration's schema, so
 * that the session's chunk is asked for at once: each session validates the whole configuration itself
 * (an invalid one is the browser session's `config_invalid` notice).
 */
export function configuredMode(): 'browser' | 'bff' {
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
  const { vault, early } = startBrowserVault();
  return (await import('./oidc-session')).createAuthSession(vault, early);
}

/** The page's vault (none where the browser has no workers), and the code handed to it early, if any. */
interface StartedVault {
  vault: WorkerVault | undefined;
  early: EarlyRedeem | undefined;
}

let started: StartedVault | undefined;

/**
 * The browser mode's token vault, its worker started once per page, and on the redirect URI the code
 * handed to it (pending-sign-in.ts). Called by createAuthSession, beside the session's chunk rather than
 * after it (the worker's script, the configuration it reads and discovery take about as long as the
 * chunk, and a sign-in waits for both); on the redirect URI sooner still, by the page's first module
 * (start-on-callback.ts), before the rest of the page's script is evaluated.
 */
export function startBrowserVault(): StartedVault {
  if (!started) {
    const vault = typeof Worker === 'function' ? new WorkerVault() : undefined;
    const early = vault && redeemEarly(vault, window.location.href, window.sessionStorage);
    started = { vault, early };
  }
  return started;
}

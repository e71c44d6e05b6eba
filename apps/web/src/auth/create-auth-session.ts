import type { AuthSession } from './auth-state';

/**
 * The session the runtime configuration asks for, each mode in a chunk of its own: `browser`, the token
 * vault's (oidc-session.ts, with oidc-client-ts and jose); `bff`, the server's (bff-session.ts, a few
 * fetches). A page loads only its own mode's code (ADR 0120).
 */
export async function createAuthSession(): Promise<AuthSession> {
  const { readRuntimeConfig } = await import('../config/runtime-config');
  let config;
  try {
    config = readRuntimeConfig().oidc;
  } catch {
    // The browser session names every invalid key in its notice (config_invalid).
    return (await import('./oidc-session')).createAuthSession();
  }
  if (config.mode === 'bff') return (await import('./bff-session')).createBffSession(config);
  return (await import('./oidc-session')).createAuthSession();
}

import type { VaultUser } from './token-vault';
import type { Vault } from './vault-protocol';

/** Where ProviderClient's state store keeps this tab's pending requests (oidc-client-ts's key prefix). */
export const STATE_PREFIX = 'gatehouse.oidc.';

/** What a pending sign-in request keeps in its state (oidc-client-ts's `state.data`). */
export interface RequestData {
  returnTo: string;
  scope: string;
  nonce: string;
  /** A top-level `prompt=none` request that restores a session the vault no longer holds. */
  restore?: boolean;
}

/** A sign-in request this tab sent and the provider has answered. */
export interface PendingSignIn {
  /** The state's id: the answer's `state` parameter. */
  id: string;
  /** The state as oidc-client-ts keeps it (`SigninState.toStorageString`): the PKCE verifier among it. */
  saved: string;
  data: Partial<RequestData>;
}

/**
 * The request that the provider's answer `url` answers, as this tab kept it (the state oidc-client-ts's
 * `WebStorageStateStore` wrote under STATE_PREFIX); undefined when none does (used already, altered, or
 * another tab's). Read without oidc-client-ts, so the page's first script can read it.
 */
export function pendingSignIn(url: string, storage: Storage): PendingSignIn | undefined {
  const id = new URL(url).searchParams.get('state');
  if (!id) return undefined;
  const saved = storage.getItem(`${STATE_PREFIX}${id}`);
  if (!saved) return undefined;
  try {
    const state = JSON.parse(saved) as { id?: unknown; data?: unknown } | null;
    if (state?.id !== id) return undefined;
    // What this tab wrote; each field is checked where it is used (the nonce, the return path).
    const data: Partial<RequestData> =
      typeof state.data === 'object' && state.data !== null ? state.data : {};
    return { id, saved, data };
  } catch {
    return undefined;
  }
}

/**
 * The nonce the request kept, or undefined when it kept none: signIn always keeps one, so a state without
 * it was not made by this app, and the ID token's nonce (OpenID Connect Core 3.1.3.7, 11) would go
 * unchecked.
 */
export function keptNonce(pending: PendingSignIn): string | undefined {
  const { nonce } = pending.data;
  return typeof nonce === 'string' && nonce !== '' ? nonce : undefined;
}

/** The code of a callback handed to the vault before the session's own code has loaded. */
export interface EarlyRedeem {
  url: string;
  redeemed: Promise<VaultUser>;
}

/**
 * On the redirect URI, hands the code to the vault at once, from the page's first script, while the
 * session's chunk still loads: the code exchange is the page's critical path. Only an answer with a code
 * to a request of this tab that kept its nonce goes; anything else is left to the session, which refuses
 * it with its reasons. The session reads the outcome (oidc-session.ts's processCallback).
 */
export function redeemEarly(vault: Vault, url: string, storage: Storage): EarlyRedeem | undefined {
  const address = new URL(url);
  if (address.pathname !== '/callback' || !address.searchParams.has('code')) return undefined;
  const pending = pendingSignIn(url, storage);
  const nonce = pending && keptNonce(pending);
  if (!pending || !nonce) return undefined;
  const redeemed = vault.call('redeem', { url, state: pending.saved, nonce });
  // Read by the session; never an unhandled rejection meanwhile.
  redeemed.catch(() => undefined);
  return { url, redeemed };
}

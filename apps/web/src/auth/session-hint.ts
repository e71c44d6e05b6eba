import type { AuthUser } from './auth-state';

/**
 * Who is signed in, as the last page of this tab knew it: claims only (what features see), never a
 * token, kept in sessionStorage beside the tokens. The first render reads it, so a reload of a
 * signed-in page paints the signed-in UI at once instead of the signed-out one while the sign-in chunk
 * loads; the session then confirms or replaces it.
 */
export const SESSION_HINT_KEY = 'gatehouse.session.user';

/** The hint, when there is one that the session could still honour (not expired beyond renewal). */
export function readSessionHint(storage: Storage | undefined, nowMs: number): AuthUser | null {
  let user: unknown;
  try {
    user = JSON.parse(storage?.getItem(SESSION_HINT_KEY) ?? 'null');
  } catch {
    return null;
  }
  if (!isAuthUser(user)) return null;
  const renewable = user.renewsAt !== null;
  return renewable || user.expiresAt > nowMs / 1000 ? user : null;
}

/**
 * That some tab of this browser holds a session, kept in localStorage (shared by the tabs) without a
 * claim: where it is absent and this tab has no hint, nobody is signed in, and the first render offers
 * "Sign in" at once instead of waiting for the token vault to say so. It may outlive a session (the
 * browser closed): that visitor then waits once, as without it.
 */
export const SESSION_SOMEWHERE_KEY = 'gatehouse.session.somewhere';

export function sessionMaybeSomewhere(storage: Storage | undefined): boolean {
  try {
    return storage?.getItem(SESSION_SOMEWHERE_KEY) !== null;
  } catch {
    return true; // Storage refused: nothing says nobody is signed in.
  }
}

export function markSessionSomewhere(storage: Storage, present: boolean): void {
  try {
    if (present) storage.setItem(SESSION_SOMEWHERE_KEY, '1');
    else storage.removeItem(SESSION_SOMEWHERE_KEY);
  } catch {
    // Refused: the first render waits for the vault, as without the mark.
  }
}

export function writeSessionHint(storage: Storage, user: AuthUser | null): void {
  try {
    if (user) storage.setItem(SESSION_HINT_KEY, JSON.stringify(user));
    else storage.removeItem(SESSION_HINT_KEY);
  } catch {
    // Storage full or refused: the first render shows "loading" instead, as without a hint.
  }
}

function isAuthUser(value: unknown): value is AuthUser {
  if (!value || typeof value !== 'object') return false;
  const user = value as Record<string, unknown>;
  return (
    typeof user.issuer === 'string' &&
    typeof user.sub === 'string' &&
    typeof user.name === 'string' &&
    (user.email === undefined || typeof user.email === 'string') &&
    Array.isArray(user.roles) &&
    user.roles.every((role) => typeof role === 'string') &&
    typeof user.expiresAt === 'number' &&
    (user.renewsAt === null || typeof user.renewsAt === 'number')
  );
}

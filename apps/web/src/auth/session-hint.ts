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

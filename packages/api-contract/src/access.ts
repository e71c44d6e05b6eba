/**
 * Who may call an endpoint or open a page: anyone, any signed-in user, or a signed-in admin. A list as
 * well as a type, so tests can hold every place that decides access to every level there is.
 */
export const accessLevels = ['public', 'signed-in', 'admin'] as const;
export type Access = (typeof accessLevels)[number];

/** The role that `admin` access asks for, read from the configured roles claim (readRoles). */
export const ADMIN_ROLE = 'admin';

/** The role an access level asks for, if any: what a 403 or the SPA's "No access" page names. */
export function roleFor(access: Access): string | undefined {
  return access === 'admin' ? ADMIN_ROLE : undefined;
}

/**
 * Whether a caller may use what this access level protects (`null`: signed out). The one rule: the
 * server's API router and the SPA's route guard and navigation all ask it, so a link the SPA shows and
 * the answer the API gives cannot disagree.
 */
export function mayAccess(access: Access, caller: { roles: readonly string[] } | null): boolean {
  if (access === 'public') return true;
  if (!caller) return false;
  const role = roleFor(access);
  return role === undefined || caller.roles.includes(role);
}

import { readRoles } from '@gatehouse/api-contract';
import { User, type SigninResponse } from 'oidc-client-ts';
import type { RuntimeConfig } from '../config/runtime-config';
import type { AuthUser } from './auth-state';

type OidcConfig = RuntimeConfig['oidc'];

/** The user oidc-client-ts keeps, from a token response and the claims checked beside it. */
export function userFrom(
  response: SigninResponse,
  sub: string,
  userInfo: Record<string, unknown> = {},
): User {
  return new User({
    ...(response.id_token === undefined ? {} : { id_token: response.id_token }),
    session_state: response.session_state,
    access_token: response.access_token,
    ...(response.refresh_token === undefined ? {} : { refresh_token: response.refresh_token }),
    token_type: response.token_type,
    ...(response.scope === undefined ? {} : { scope: response.scope }),
    profile: { ...response.profile, ...userInfo, sub },
    ...(response.expires_at === undefined ? {} : { expires_at: response.expires_at }),
  });
}

/** Whether the user's tokens are bound to this browser's DPoP key (RFC 9449). */
export function isBound(user: Pick<User, 'token_type'>): boolean {
  return user.token_type.toLowerCase() === 'dpop';
}

/** What the app shows of a signed-in user: names, roles (read as the server reads them), expiry. */
export function describeUser(
  user: { profile: { sub: string } & Record<string, unknown>; expires_at?: number | undefined },
  config: Pick<OidcConfig, 'authority' | 'rolesClaim'>,
  renewsAt: AuthUser['renewsAt'],
): AuthUser {
  const profile = user.profile;
  const text = (value: unknown) => (typeof value === 'string' && value ? value : undefined);
  return {
    issuer: config.authority,
    sub: user.profile.sub,
    name: text(profile.name) ?? text(profile.preferred_username) ?? text(profile.email) ?? user.profile.sub,
    email: text(profile.email),
    roles: readRoles(profile, config.rolesClaim),
    expiresAt: user.expires_at ?? 0,
    renewsAt,
  };
}

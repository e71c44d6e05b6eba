import type { KoaContextWithOIDC } from 'oidc-provider';

import { logoutConfirmPage, sendPage } from './views.js';

/** Options of the session cookie; clearing it needs the same ones it was set with. */
export const LONG_COOKIE = { httpOnly: true, sameSite: 'lax', path: '/' } as const;

/**
 * RP-initiated logout without a confirmation click.
 *
 * oidc-provider renders `logoutSource` with a form that must be POSTed to /session/end/confirm; submitting it
 * without a click would need a script, which our pages do not run. So when the request proves it comes from the
 * client for the signed-in user (an id_token_hint the provider has already validated, whose sub is the session's
 * account, and a registered post_logout_redirect_uri), we do what the confirm step does with logout=yes: revoke the
 * session's grants, destroy the session, clear its cookie and redirect. Anything less gets a one-button page.
 */
export async function logoutSource(ctx: KoaContextWithOIDC, form: string): Promise<void> {
  const { client, entities, params, provider, session } = ctx.oidc;
  const hint = entities.IdTokenHint;
  const postLogoutRedirectUri = params?.post_logout_redirect_uri;

  if (
    !client ||
    !session?.accountId ||
    hint?.payload.sub !== session.accountId ||
    typeof postLogoutRedirectUri !== 'string'
  ) {
    sendPage(ctx, 200, 'Sign out', logoutConfirmPage(form));
    return;
  }

  for (const { grantId } of Object.values(session.authorizations ?? {})) {
    if (!grantId) continue;
    await Promise.all([
      provider.AccessToken.revokeByGrantId(grantId),
      provider.RefreshToken.revokeByGrantId(grantId),
      provider.AuthorizationCode.revokeByGrantId(grantId),
      provider.Grant.adapter.destroy(grantId),
    ]);
  }
  await session.destroy();
  ctx.oidc.cookies.set(provider.cookieName('session'), null, LONG_COOKIE);

  const target = new URL(postLogoutRedirectUri);
  if (typeof params?.state === 'string') target.searchParams.set('state', params.state);
  provider.emit('end_session.success', ctx);
  ctx.status = 303;
  ctx.redirect(target.href);
}

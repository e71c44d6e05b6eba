import type Koa from 'koa';
import type Provider from 'oidc-provider';
import type { Interaction } from 'oidc-provider';

import { authenticate } from './accounts.js';
import { readForm } from './body.js';
import { errorPage, loginPage, sendPage } from './views.js';

// `interactions.url` in the provider configuration points here: GET shows the page, POSTs act on it.
const ROUTE = /^\/interaction\/([^/]+)(?:\/(login|abort))?$/;

export const LOGIN_ERROR = 'Unknown username or password.';

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((item): item is string => typeof item === 'string') : [];
}

/**
 * Consent is normally never asked: `loadExistingGrant` grants everything the first-party client requests.
 * A client can still demand the prompt (prompt=consent); then we grant what the provider reports missing.
 */
async function grantMissingConsent(provider: Provider, interaction: Interaction): Promise<string> {
  const { details } = interaction.prompt;
  const grant =
    (interaction.grantId ? await provider.Grant.find(interaction.grantId) : undefined) ??
    new provider.Grant({
      accountId: interaction.session?.accountId,
      clientId: String(interaction.params.client_id),
    });
  grant.addOIDCScope(strings(details.missingOIDCScope));
  grant.addOIDCClaims(strings(details.missingOIDCClaims));
  const resourceScopes = (details.missingResourceScopes ?? {}) as Record<string, unknown>;
  for (const [indicator, scopes] of Object.entries(resourceScopes)) {
    grant.addResourceScope(indicator, strings(scopes));
  }
  return grant.save();
}

/** The login page: server-rendered HTML driven by oidc-provider's interaction API (devInteractions is off). */
export function interactionRoutes(provider: Provider): Koa.Middleware {
  return async (ctx, next) => {
    const match = ROUTE.exec(ctx.path);
    if (!match) {
      await next();
      return;
    }
    const [, uid, action] = match;
    const expectedMethod = action ? 'POST' : 'GET';
    if (ctx.method !== expectedMethod) {
      ctx.status = 405;
      ctx.set('Allow', expectedMethod);
      return;
    }

    // Undefined when the interaction cookie is missing or the interaction expired (or the provider restarted).
    const interaction = await provider.interactionDetails(ctx.req, ctx.res).catch(() => undefined);
    if (!interaction || interaction.uid !== uid) {
      sendPage(
        ctx,
        400,
        'Sign-in expired',
        errorPage(
          'This sign-in attempt has expired or is not valid. Go back to the application and sign in again.',
        ),
      );
      return;
    }

    const finish = async (result: Parameters<Provider['interactionResult']>[2], merge: boolean) => {
      const returnTo = await provider.interactionResult(ctx.req, ctx.res, result, {
        mergeWithLastSubmission: merge,
      });
      ctx.status = 303;
      ctx.redirect(returnTo);
    };

    if (action === 'abort') {
      // The authorization endpoint turns this into error=access_denied at the client's redirect_uri.
      await finish({ error: 'access_denied', error_description: 'End-User aborted interaction' }, false);
      return;
    }

    if (interaction.prompt.name === 'consent') {
      await finish({ consent: { grantId: await grantMissingConsent(provider, interaction) } }, true);
      return;
    }

    const clientId = String(interaction.params.client_id);
    const clientName = (await provider.Client.find(clientId))?.clientName ?? clientId;

    if (action === 'login') {
      const form = await readForm(ctx.req);
      const username = form.get('username') ?? '';
      const account = authenticate(username, form.get('password') ?? '');
      if (!account) {
        sendPage(ctx, 200, 'Sign in', loginPage({ uid, clientName, username, error: LOGIN_ERROR }));
        return;
      }
      await finish({ login: { accountId: account.sub } }, false);
      return;
    }

    sendPage(ctx, 200, 'Sign in', loginPage({ uid, clientName }));
  };
}

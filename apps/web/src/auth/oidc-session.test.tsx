import { render, screen, waitFor } from '@testing-library/react';
import { MetadataService, OidcClient, SigninResponse, type SigninState } from 'oidc-client-ts';
import { StrictMode } from 'react';
import { Router } from 'wouter';
import { memoryLocation } from 'wouter/memory-location';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { AuthProvider } from './auth-context';
import { CallbackPage } from './callback-page';
import type * as IdToken from './id-token';
import { OidcSession, toAuthError } from './oidc-session';

vi.mock('./id-token', async (importOriginal) => ({
  ...(await importOriginal<typeof IdToken>()),
  validateIdToken: vi.fn(() => Promise.resolve({ sub: 'alice' })),
}));

const AUTHORITY = 'http://localhost:3001';
const config = {
  authority: AUTHORITY,
  clientId: 'gatehouse',
  scope: 'openid profile email offline_access',
  rolesClaim: 'roles',
  tokenStore: 'session' as const,
  extraQueryParams: {},
};

function newSession() {
  return new OidcSession(config, {
    location: { origin: 'http://localhost:3000', assign: vi.fn() },
    sessionStorage: window.sessionStorage,
    now: () => Date.now(),
  });
}

afterEach(() => window.sessionStorage.clear());

describe('OidcSession.completeSignIn', () => {
  it('processes the callback exactly once under React StrictMode', async () => {
    vi.spyOn(MetadataService.prototype, 'getIssuer').mockResolvedValue(AUTHORITY);
    vi.spyOn(OidcClient.prototype, 'readSigninResponseState').mockResolvedValue({
      state: { nonce: 'n-1', data: { returnTo: '/profile' } } as unknown as SigninState,
      response: new SigninResponse(new URLSearchParams()),
    });
    const response = Object.assign(new SigninResponse(new URLSearchParams('code=c&state=s')), {
      id_token: 'header.payload.signature',
      access_token: 'at',
      refresh_token: 'rt',
      token_type: 'Bearer',
      scope: config.scope,
      profile: { sub: 'alice', name: 'Alice', roles: ['member'] },
      expires_in: 300,
    });
    const exchange = vi.spyOn(OidcClient.prototype, 'processSigninResponse').mockResolvedValue(response);

    window.history.replaceState(null, '', '/callback?code=c&state=s');
    const session = newSession();
    const location = memoryLocation({ path: '/callback', record: true });
    render(
      <StrictMode>
        <Router hook={location.hook}>
          <AuthProvider loadSession={() => Promise.resolve(session)}>
            <CallbackPage />
          </AuthProvider>
        </Router>
      </StrictMode>,
    );

    await waitFor(() => expect(location.history?.at(-1)).toBe('/profile'));
    expect(exchange).toHaveBeenCalledTimes(1);
    expect(session.getState()).toMatchObject({
      status: 'signed-in',
      user: { name: 'Alice', roles: ['member'] },
    });
    expect(window.sessionStorage.getItem('gatehouse.session')).toContain('"access_token":"at"');
    expect(screen.queryByText('Sign-in failed')).toBeNull();
  });

  it('keeps no session when the state is unknown (replayed or forged)', async () => {
    vi.spyOn(OidcClient.prototype, 'readSigninResponseState').mockRejectedValue(
      new Error('No matching state found in storage'),
    );
    const session = newSession();
    const result = await session.completeSignIn('http://localhost:3000/callback?code=c&state=forged');
    expect(result).toEqual({
      ok: false,
      error: {
        code: 'state_mismatch',
        message: expect.stringContaining('used already or altered') as string,
      },
    });
    expect(window.sessionStorage.getItem('gatehouse.session')).toBeNull();
  });
});

describe('toAuthError', () => {
  it('explains failures in one sentence each', () => {
    expect(toAuthError(new TypeError('Failed to fetch')).code).toBe('provider_unreachable');
    expect(
      toAuthError(new Error('subject from UserInfo response does not match subject in ID Token')).code,
    ).toBe('userinfo_mismatch');
    expect(
      toAuthError(new Error('nonce in id_token does not match nonce in client storage')).message,
    ).toMatch(/nonce does not match/);
  });
});

import { InMemoryWebStorage, OidcClient, SigninState, WebStorageStateStore } from 'oidc-client-ts';
import { describe, expect, it, vi } from 'vitest';
import { pendingSignIn, redeemEarly, STATE_PREFIX } from './pending-sign-in';
import { APP_ORIGIN, AUTHORITY, testOidcConfig } from './test-provider';
import type { Vault } from './vault-protocol';

/** A sign-in request as ProviderClient makes it, kept by oidc-client-ts in `storage`: its state's id. */
async function requestKeptIn(storage: Storage, data: Record<string, unknown>): Promise<string> {
  const client = new OidcClient({
    authority: AUTHORITY,
    client_id: testOidcConfig.clientId,
    redirect_uri: `${APP_ORIGIN}/callback`,
    metadata: { issuer: AUTHORITY, authorization_endpoint: `${AUTHORITY}/authorize` },
    stateStore: new WebStorageStateStore({ store: storage, prefix: STATE_PREFIX }),
  });
  const request = await client.createSigninRequest({ request_type: 'si:r', state: data });
  return request.state.id;
}

function fakeVault() {
  const call = vi.fn(() => Promise.resolve({ profile: { sub: 'alice' } }));
  return { vault: { call, listen: () => undefined } as unknown as Vault, call };
}

describe('pendingSignIn', () => {
  it('reads the request oidc-client-ts kept, as oidc-client-ts reads it back', async () => {
    const storage = new InMemoryWebStorage();
    const id = await requestKeptIn(storage, { nonce: 'n-1', returnTo: '/profile' });
    const pending = pendingSignIn(`${APP_ORIGIN}/callback?code=c&state=${id}`, storage);
    expect(pending).toMatchObject({ id, data: { nonce: 'n-1', returnTo: '/profile' } });
    const state = await SigninState.fromStorageString(pending?.saved ?? '');
    expect(state.code_verifier).toMatch(/^[\w-]{43,}$/);
  });

  it('finds none for an unknown, missing or altered state', async () => {
    const storage = new InMemoryWebStorage();
    const id = await requestKeptIn(storage, { nonce: 'n-1' });
    expect(pendingSignIn(`${APP_ORIGIN}/callback?code=c&state=forged`, storage)).toBeUndefined();
    expect(pendingSignIn(`${APP_ORIGIN}/callback?code=c`, storage)).toBeUndefined();
    storage.setItem(`${STATE_PREFIX}${id}`, '{not json');
    expect(pendingSignIn(`${APP_ORIGIN}/callback?code=c&state=${id}`, storage)).toBeUndefined();
    storage.setItem(`${STATE_PREFIX}${id}`, JSON.stringify({ id: 'another', data: { nonce: 'n-1' } }));
    expect(pendingSignIn(`${APP_ORIGIN}/callback?code=c&state=${id}`, storage)).toBeUndefined();
  });
});

describe('redeemEarly', () => {
  it("hands the code, the kept state and its nonce to the vault for an answer to this tab's request", async () => {
    const storage = new InMemoryWebStorage();
    const id = await requestKeptIn(storage, { nonce: 'n-1' });
    const url = `${APP_ORIGIN}/callback?code=c&state=${id}`;
    const { vault, call } = fakeVault();
    const early = redeemEarly(vault, url, storage);
    expect(early?.url).toBe(url);
    expect(call).toHaveBeenCalledExactlyOnceWith('redeem', {
      url,
      state: storage.getItem(`${STATE_PREFIX}${id}`),
      nonce: 'n-1',
    });
  });

  it("leaves to the session an error answer, another tab's state, a state without a nonce, and other pages", async () => {
    const storage = new InMemoryWebStorage();
    const id = await requestKeptIn(storage, { nonce: 'n-1' });
    const withoutNonce = await requestKeptIn(storage, { returnTo: '/' });
    const { vault, call } = fakeVault();
    for (const url of [
      `${APP_ORIGIN}/callback?error=access_denied&state=${id}`,
      `${APP_ORIGIN}/callback?code=c&state=forged`,
      `${APP_ORIGIN}/callback?code=c&state=${withoutNonce}`,
      `${APP_ORIGIN}/profile?code=c&state=${id}`,
    ]) {
      expect(redeemEarly(vault, url, storage)).toBeUndefined();
    }
    expect(call).not.toHaveBeenCalled();
  });
});

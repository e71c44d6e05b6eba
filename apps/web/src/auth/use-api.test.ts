import { describe, expect, it, vi } from 'vitest';
import { ApiError, callApi, toApiError } from './use-api';

describe('toApiError', () => {
  it("says the server's own reason from its JSON body", async () => {
    const error = await toApiError(
      Response.json({ error: 'forbidden', message: 'This needs the admin role.' }, { status: 403 }),
    );
    expect(error).toMatchObject({ status: 403, code: 'forbidden' });
    expect(error.message).toBe('The server answered 403: This needs the admin role.');
  });

  it("falls back to the bearer challenge's error_description", async () => {
    const error = await toApiError(
      new Response('', {
        status: 401,
        headers: {
          'WWW-Authenticate':
            'Bearer realm="gatehouse", error="invalid_token", error_description="the token is for another audience"',
        },
      }),
    );
    expect(error).toMatchObject({ status: 401, code: 'invalid_token' });
    expect(error.message).toBe('The server answered 401: the token is for another audience.');
  });

  it('says the status when the server gives no reason', async () => {
    const error = await toApiError(new Response('<html>', { status: 502, statusText: 'Bad Gateway' }));
    expect(error).toMatchObject({ status: 502, code: undefined });
    expect(error.message).toBe('The server answered 502 Bad Gateway.');
  });
});

describe('callApi', () => {
  const refused = () =>
    Response.json(
      { error: 'invalid_token', message: 'The access token has expired' },
      { status: 401, headers: { 'WWW-Authenticate': 'Bearer realm="gatehouse", error="invalid_token"' } },
    );
  /** A server that accepts only the token `good`, and the calls it saw. */
  function server() {
    const seen: (string | null)[] = [];
    const fetchImpl = vi.fn((_path: RequestInfo | URL, init?: RequestInit) => {
      const authorization = new Headers(init?.headers).get('Authorization');
      seen.push(authorization);
      return Promise.resolve(authorization === 'Bearer good' ? Response.json({ sub: 'someone' }) : refused());
    });
    return { seen, fetchImpl: fetchImpl as typeof fetch };
  }

  /** A session holding `first`; renew() makes it hold `renewed` (null: the session ended; an Error: it fails). */
  function session(first: string, renewed: string | null | Error = first) {
    let current: string | null = first;
    return {
      authorize: () => Promise.resolve(current === null ? null : { Authorization: `Bearer ${current}` }),
      renew: vi.fn(() => {
        if (renewed instanceof Error) return Promise.reject(renewed);
        current = renewed;
        return Promise.resolve();
      }),
      sawApiAnswer: vi.fn(),
    };
  }

  it('answers the JSON body, with the bearer token, without renewing', async () => {
    const { seen, fetchImpl } = server();
    const auth = session('good', 'other');
    await expect(callApi('/api/me', {}, auth, fetchImpl)).resolves.toEqual({ sub: 'someone' });
    expect(seen).toEqual(['Bearer good']);
    expect(auth.renew).not.toHaveBeenCalled();
    expect(auth.sawApiAnswer).toHaveBeenCalledOnce();
  });

  it('renews the token once after a 401 and tries again with the new one', async () => {
    const { seen, fetchImpl } = server();
    const auth = session('expired', 'good');
    await expect(callApi('/api/me', {}, auth, fetchImpl)).resolves.toEqual({ sub: 'someone' });
    expect(seen).toEqual(['Bearer expired', 'Bearer good']);
    expect(auth.renew).toHaveBeenCalledOnce();
  });

  it.each([
    ['cannot be renewed', null],
    ['fails to renew', new Error('refresh token revoked')],
  ])('asks to sign in again when the session %s, without a second call', async (_case, renewed) => {
    const { seen, fetchImpl } = server();
    const error = await callApi('/api/me', {}, session('expired', renewed), fetchImpl).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token', signInRequired: true });
    expect((error as ApiError).message).toMatch(/Sign in again to continue\.$/);
    expect(seen).toEqual(['Bearer expired']);
  });

  it('asks to sign in again when the renewed token is refused too, and stops there (no loop)', async () => {
    const { seen, fetchImpl } = server();
    const auth = session('expired', 'revoked');
    const error = await callApi('/api/me', {}, auth, fetchImpl).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token', signInRequired: true });
    expect(seen).toEqual(['Bearer expired', 'Bearer revoked']);
    expect(auth.renew).toHaveBeenCalledOnce();
  });

  it('turns other refusals into an ApiError without renewing', async () => {
    const fetchImpl = (() =>
      Promise.resolve(
        Response.json({ error: 'forbidden', message: 'This needs the admin role.' }, { status: 403 }),
      )) as typeof fetch;
    const auth = session('good');
    const error = await callApi('/api/usage/overview', {}, auth, fetchImpl).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403, code: 'forbidden', signInRequired: false });
    expect(auth.renew).not.toHaveBeenCalled();
  });

  it("sends once more with the API's DPoP nonce when it asks for one (RFC 9449 9), without renewing", async () => {
    const proofs: (string | null)[] = [];
    let nonce: string | undefined;
    const auth = {
      authorize: ({ url, method }: { url: string; method: string }) =>
        Promise.resolve({ Authorization: 'DPoP good', DPoP: `proof ${method} ${url} ${nonce ?? '-'}` }),
      renew: vi.fn(() => Promise.resolve()),
      sawApiAnswer: (response: Pick<Response, 'headers'>) => {
        nonce = response.headers.get('DPoP-Nonce') ?? nonce;
      },
    };
    const fetchImpl = ((_path: RequestInfo | URL, init?: RequestInit) => {
      const proof = new Headers(init?.headers).get('DPoP');
      proofs.push(proof);
      return Promise.resolve(
        proof?.endsWith(' n-1')
          ? Response.json({ sub: 'someone' })
          : Response.json(
              { error: 'use_dpop_nonce', message: 'The API requires a DPoP nonce.' },
              {
                status: 401,
                headers: { 'WWW-Authenticate': 'DPoP error="use_dpop_nonce"', 'DPoP-Nonce': 'n-1' },
              },
            ),
      );
    }) as typeof fetch;
    await expect(callApi('/api/me', { method: 'post' }, auth, fetchImpl)).resolves.toEqual({
      sub: 'someone',
    });
    expect(proofs).toEqual([
      `proof POST ${window.location.origin}/api/me -`,
      `proof POST ${window.location.origin}/api/me n-1`,
    ]);
    expect(auth.renew).not.toHaveBeenCalled();
  });
});

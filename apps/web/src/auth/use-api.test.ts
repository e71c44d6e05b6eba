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

  it('answers the JSON body, with the bearer token, without renewing', async () => {
    const { seen, fetchImpl } = server();
    const renewAccessToken = vi.fn(() => Promise.resolve('other'));
    const tokens = { getAccessToken: () => Promise.resolve('good'), renewAccessToken };
    await expect(callApi('/api/me', {}, tokens, fetchImpl)).resolves.toEqual({ sub: 'someone' });
    expect(seen).toEqual(['Bearer good']);
    expect(renewAccessToken).not.toHaveBeenCalled();
  });

  it('renews the token once after a 401 and tries again with the new one', async () => {
    const { seen, fetchImpl } = server();
    const tokens = {
      getAccessToken: () => Promise.resolve('expired'),
      renewAccessToken: vi.fn(() => Promise.resolve('good')),
    };
    await expect(callApi('/api/me', {}, tokens, fetchImpl)).resolves.toEqual({ sub: 'someone' });
    expect(seen).toEqual(['Bearer expired', 'Bearer good']);
    expect(tokens.renewAccessToken).toHaveBeenCalledOnce();
  });

  it.each([
    ['cannot be renewed', () => Promise.resolve(null)],
    ['fails to renew', () => Promise.reject(new Error('refresh token revoked'))],
  ])('asks to sign in again when the session %s, without a second call', async (_case, renew) => {
    const { seen, fetchImpl } = server();
    const tokens = { getAccessToken: () => Promise.resolve('expired'), renewAccessToken: renew };
    const error = await callApi('/api/me', {}, tokens, fetchImpl).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token', signInRequired: true });
    expect((error as ApiError).message).toMatch(/Sign in again to continue\.$/);
    expect(seen).toEqual(['Bearer expired']);
  });

  it('asks to sign in again when the renewed token is refused too, and stops there (no loop)', async () => {
    const { seen, fetchImpl } = server();
    const tokens = {
      getAccessToken: () => Promise.resolve('expired'),
      renewAccessToken: vi.fn(() => Promise.resolve('revoked')),
    };
    const error = await callApi('/api/me', {}, tokens, fetchImpl).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token', signInRequired: true });
    expect(seen).toEqual(['Bearer expired', 'Bearer revoked']);
    expect(tokens.renewAccessToken).toHaveBeenCalledOnce();
  });

  it('turns other refusals into an ApiError without renewing', async () => {
    const renewAccessToken = vi.fn(() => Promise.resolve('good'));
    const fetchImpl = (() =>
      Promise.resolve(
        Response.json({ error: 'forbidden', message: 'This needs the admin role.' }, { status: 403 }),
      )) as typeof fetch;
    const tokens = { getAccessToken: () => Promise.resolve('good'), renewAccessToken };
    const error = await callApi('/api/usage/overview', {}, tokens, fetchImpl).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403, code: 'forbidden', signInRequired: false });
    expect(renewAccessToken).not.toHaveBeenCalled();
  });
});

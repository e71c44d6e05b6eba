import { describe, expect, it, vi } from 'vitest';
import type { ApiAnswer, ApiRequest } from './token-vault';
import { ApiError, callApi, toApiError, toResponse } from './use-api';

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
  /** The vault's answer as it crosses to the page: plain data. */
  async function answerOf(response: Response): Promise<ApiAnswer> {
    return {
      status: response.status,
      statusText: response.statusText,
      headers: [...response.headers],
      body: await response.text(),
    };
  }

  /**
   * A session holding the token `first`, whose vault calls a server that accepts only the token `good`;
   * renew() makes it hold `renewed` (null: the session ended; an Error: it fails). `seen`: the tokens the
   * server saw, `requests`: what the page handed the vault.
   */
  function session(first: string, renewed: string | null | Error = first) {
    let current: string | null = first;
    const seen: (string | null)[] = [];
    const requests: ApiRequest[] = [];
    return {
      seen,
      requests,
      fetchApi: vi.fn((request: ApiRequest) => {
        requests.push(request);
        seen.push(current);
        return answerOf(current === 'good' ? Response.json({ sub: 'someone' }) : refused());
      }),
      renew: vi.fn(() => {
        if (renewed instanceof Error) return Promise.reject(renewed);
        current = renewed;
        return Promise.resolve(renewed !== null);
      }),
    };
  }

  it('answers the JSON body, sending the request to the vault, without renewing', async () => {
    const auth = session('good', 'other');
    await expect(callApi('/api/me', {}, auth)).resolves.toEqual({ sub: 'someone' });
    expect(auth.seen).toEqual(['good']);
    expect(auth.requests).toEqual([
      { url: `${window.location.origin}/api/me`, method: 'GET', headers: [['accept', 'application/json']] },
    ]);
    expect(auth.renew).not.toHaveBeenCalled();
  });

  it('hands the vault the method in capitals and a text body', async () => {
    const auth = session('good');
    await callApi('/api/me', { method: 'post', body: '{"a":1}' }, auth);
    expect(auth.requests[0]).toMatchObject({ method: 'POST', body: '{"a":1}' });
    await expect(
      callApi('/api/me', { method: 'POST', body: new URLSearchParams('a=1') }, auth),
    ).rejects.toThrow(TypeError);
  });

  it('renews the token once after a 401 and tries again with the new one', async () => {
    const auth = session('expired', 'good');
    await expect(callApi('/api/me', {}, auth)).resolves.toEqual({ sub: 'someone' });
    expect(auth.seen).toEqual(['expired', 'good']);
    expect(auth.renew).toHaveBeenCalledOnce();
  });

  it.each([
    ['cannot be renewed', null],
    ['fails to renew', new Error('refresh token revoked')],
  ])('asks to sign in again when the session %s, without a second call', async (_case, renewed) => {
    const auth = session('expired', renewed);
    const error = await callApi('/api/me', {}, auth).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token', signInRequired: true });
    expect((error as ApiError).message).toMatch(/Sign in again to continue\.$/);
    expect(auth.seen).toEqual(['expired']);
  });

  it('asks to sign in again when the renewed token is refused too, and stops there (no loop)', async () => {
    const auth = session('expired', 'revoked');
    const error = await callApi('/api/me', {}, auth).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 401, code: 'invalid_token', signInRequired: true });
    expect(auth.seen).toEqual(['expired', 'revoked']);
    expect(auth.renew).toHaveBeenCalledOnce();
  });

  it('turns other refusals into an ApiError without renewing', async () => {
    const auth = {
      fetchApi: () =>
        answerOf(
          Response.json({ error: 'forbidden', message: 'This needs the admin role.' }, { status: 403 }),
        ),
      renew: vi.fn(() => Promise.resolve(true)),
    };
    const error = await callApi('/api/usage/overview', {}, auth).catch((e: unknown) => e);
    expect(error).toMatchObject({ status: 403, code: 'forbidden', signInRequired: false });
    expect(auth.renew).not.toHaveBeenCalled();
  });
});

describe('toResponse', () => {
  it("makes a Response of the vault's answer, without a body for the statuses that have none", async () => {
    const ok = toResponse({
      status: 200,
      statusText: 'OK',
      headers: [['content-type', 'application/json']],
      body: '{"a":1}',
    });
    expect(ok.headers.get('content-type')).toBe('application/json');
    await expect(ok.json()).resolves.toEqual({ a: 1 });
    expect(toResponse({ status: 204, statusText: '', headers: [], body: '' }).status).toBe(204);
  });
});

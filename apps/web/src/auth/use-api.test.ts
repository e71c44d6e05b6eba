import { describe, expect, it } from 'vitest';
import { toApiError } from './use-api';

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

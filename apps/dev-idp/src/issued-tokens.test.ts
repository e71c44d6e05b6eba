import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { TEST_CONTROL_SECRET_HEADER, startDevIdp } from './index.js';
import type { DevIdp } from './index.js';
import { APP_ORIGIN, CLIENT_ID, form, signInForTokens } from './test-support/oidc-flow.js';

let idp: DevIdp;
beforeAll(async () => {
  idp = await startDevIdp({ port: 0, appOrigin: APP_ORIGIN, testControls: true, log: () => undefined });
});
afterAll(async () => {
  await idp.close();
});

async function issued(query = '', secret = idp.testControlsSecret ?? '') {
  const response = await fetch(`${idp.issuer}/__test/issued-tokens${query}`, {
    headers: { [TEST_CONTROL_SECRET_HEADER]: secret },
  });
  return {
    status: response.status,
    body: (await response.json()) as { grants: Array<Record<string, unknown>> },
  };
}

describe('the issued tokens of the test controls', () => {
  it("lists a browser's grants by its provider session, and the revocations that named them", async () => {
    const first = await signInForTokens(idp.issuer, 'alice');
    const other = await signInForTokens(idp.issuer, 'admin');
    const cookie = /(?:^|; )dev_idp_session=([^;]+)/.exec(first.signedIn.jar.header())?.[1] ?? '';
    expect(cookie).not.toBe('');

    const mine = await issued(`?session=${encodeURIComponent(cookie)}`);
    expect(mine.status).toBe(200);
    expect(mine.body.grants).toEqual([
      expect.objectContaining({
        sub: 'alice',
        access_token: first.tokens.access_token,
        refresh_token: first.tokens.refresh_token,
        revoked: [],
      }),
    ]);
    expect(JSON.stringify(mine.body)).not.toContain(other.tokens.access_token);

    const revoked = await fetch(`${idp.issuer}/token/revocation`, {
      ...form({ client_id: CLIENT_ID, token: first.tokens.refresh_token }),
    });
    expect(revoked.status).toBe(200);
    const uid = String(mine.body.grants[0]?.sessionUid);
    const after = await issued(`?uid=${encodeURIComponent(uid)}`);
    expect(after.body.grants).toEqual([expect.objectContaining({ revoked: ['refresh_token'] })]);
  });

  it('answers nobody without the secret', async () => {
    expect((await issued('', 'wrong')).status).toBe(403);
  });
});

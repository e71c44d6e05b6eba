import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { startDevIdp } from './index.js';
import type { DevIdp } from './index.js';
import { APP_ORIGIN, CLIENT_ID, signInForTokens } from './test-support/oidc-flow.js';

const API_CLIENT = { client_id: 'gatehouse-api', client_secret: 'test-secret' };
let idp: DevIdp;
const logLines: string[] = [];

beforeAll(async () => {
  idp = await startDevIdp({
    port: 0,
    appOrigin: APP_ORIGIN,
    accessTokenFormat: 'opaque',
    introspectionClient: API_CLIENT,
    log: (line) => logLines.push(line),
  });
});

afterAll(() => idp.close());

function introspect(token: string, client = API_CLIENT) {
  const basic = Buffer.from(`${client.client_id}:${client.client_secret}`).toString('base64');
  return fetch(`${idp.issuer}/token/introspection`, {
    method: 'POST',
    headers: { authorization: `Basic ${basic}`, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ token, token_type_hint: 'access_token' }),
  });
}

describe('opaque access tokens', () => {
  it('says so at start and in discovery (introspection_endpoint)', async () => {
    expect(logLines.join('\n')).toContain('Access tokens: opaque');
    const response = await fetch(`${idp.issuer}/.well-known/openid-configuration`);
    const doc = (await response.json()) as Record<string, unknown>;
    expect(doc.introspection_endpoint).toBe(`${idp.issuer}/token/introspection`);
  });

  it('issues an access token that is not a JWT, and userinfo answers it', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    expect(tokens.access_token.split('.')).toHaveLength(1);
    const userinfo = await fetch(`${idp.issuer}/me`, {
      headers: { authorization: `Bearer ${tokens.access_token}` },
    });
    expect(userinfo.status).toBe(200);
    expect(await userinfo.json()).toMatchObject({ sub: 'alice', name: 'Alice Liddell' });
  });

  it('lets the API client introspect it, and no one else', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    const answer = await introspect(tokens.access_token);
    expect(answer.status).toBe(200);
    expect(await answer.json()).toMatchObject({
      active: true,
      sub: 'alice',
      client_id: CLIENT_ID,
      token_type: 'Bearer',
      iss: idp.issuer,
    });
    expect((await introspect(tokens.access_token, { ...API_CLIENT, client_secret: 'wrong' })).status).toBe(
      401,
    );
  });

  it('answers inactive for a token it does not know and for a refresh token', async () => {
    const { tokens } = await signInForTokens(idp.issuer);
    expect(await (await introspect('not-a-token')).json()).toEqual({ active: false });
    const refresh = tokens.refresh_token;
    expect(refresh).toBeDefined();
    // oidc-provider would call it active, with no token_type: an API could not tell it from an access token.
    expect(await (await introspect(refresh)).json()).toEqual({ active: false });
  });
});

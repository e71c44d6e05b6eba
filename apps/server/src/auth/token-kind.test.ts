import { describe, expect, it } from 'vitest';
import { notAnAccessToken } from './token-kind.js';

type Sample = { header: Record<string, unknown>; payload: Record<string, unknown> };

const now = 1_800_000_000;
const times = { iat: now, nbf: now, exp: now + 3600 };

/**
 * Claim sets as each documented provider issues them (from their token reference pages), reduced to what
 * matters here. Where the API's audience equals the client id, the access token and the ID token of one
 * sign-in both pass signature, issuer, audience and expiry: only these markers tell them apart.
 */
const PRESETS: Record<string, { access?: Sample; id: Sample[] }> = {
  // learn.microsoft.com: "Access token claims reference" / "ID token claims reference" (v2.0).
  'Microsoft Entra ID': {
    access: {
      header: { typ: 'JWT', alg: 'RS256', kid: 'k' },
      payload: {
        aud: '6e74172b-be56-4843-9ff4-e66a39bb12e3',
        iss: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0',
        ...times,
        aio: 'AXQAi/8I',
        azp: '6e74172b-be56-4843-9ff4-e66a39bb12e3',
        azpacr: '0',
        name: 'Abe Lincoln',
        oid: '690222be-ff1a-4d56-abd1-7e4f7d38e474',
        preferred_username: 'abeli@microsoft.com',
        scp: 'access_as_user',
        sub: 'HKZpfaHyWadeOouYlitjrI-KffTm222X5rrV3xDqfKQ',
        tid: '72f988bf-86f1-41af-91ab-2d7cd011db47',
        uti: 'fqiBqXLPj0eQa82S-IYFAA',
        ver: '2.0',
      },
    },
    id: [
      {
        header: { typ: 'JWT', alg: 'RS256', kid: 'k' },
        payload: {
          aud: '6e74172b-be56-4843-9ff4-e66a39bb12e3',
          iss: 'https://login.microsoftonline.com/72f988bf-86f1-41af-91ab-2d7cd011db47/v2.0',
          ...times,
          aio: 'Df2UVXL1ix!lMCWMSOJBcFatzcGfvFGhjKv8q5g0x732dR5MB5BisvGQO7YWByjd8iQDLq!eGbIDakyp5mnOrcdqHeYSnltepQmRp6AIZ8jY',
          name: 'Abe Lincoln',
          nonce: '123523',
          oid: '00000000-0000-0000-66f3-3332eca7ea81',
          preferred_username: 'abeli@microsoft.com',
          sub: 'HKZpfaHyWadeOouYlitjrI-KffTm222X5rrV3xDqfKQ',
          tid: '72f988bf-86f1-41af-91ab-2d7cd011db47',
          ver: '2.0',
        },
      },
    ],
  },
  // auth0.com/docs: "Access token profiles" (RFC 9068 profile) and "ID token structure".
  Auth0: {
    access: {
      header: { typ: 'at+jwt', alg: 'RS256', kid: 'k' },
      payload: {
        iss: 'https://tenant.eu.auth0.com/',
        sub: 'auth0|62a1b2c3',
        aud: ['https://api.example.com', 'https://tenant.eu.auth0.com/userinfo'],
        ...times,
        scope: 'openid profile email',
        client_id: 'Wf3yQ9aB',
        jti: 'b1c2',
      },
    },
    id: [
      {
        header: { typ: 'JWT', alg: 'RS256', kid: 'k' },
        payload: {
          iss: 'https://tenant.eu.auth0.com/',
          sub: 'auth0|62a1b2c3',
          aud: 'Wf3yQ9aB',
          ...times,
          name: 'Jane',
          email: 'jane@example.com',
          sid: 'xyz',
          nonce: 'n-0S6_WzA2Mj',
        },
      },
    ],
  },
  // Keycloak: its own `typ` claim (Bearer / ID) in every token it issues.
  Keycloak: {
    access: {
      header: { typ: 'JWT', alg: 'RS256', kid: 'k' },
      payload: {
        ...times,
        jti: 'onrtac:1',
        iss: 'https://keycloak.example.com/realms/gatehouse',
        aud: 'gatehouse',
        sub: 'f1b9b0e0',
        typ: 'Bearer',
        azp: 'gatehouse',
        sid: 's1',
        realm_access: { roles: ['admin'] },
        scope: 'openid profile email',
        name: 'Jane',
      },
    },
    id: [
      {
        header: { typ: 'JWT', alg: 'RS256', kid: 'k' },
        payload: {
          ...times,
          iss: 'https://keycloak.example.com/realms/gatehouse',
          aud: 'gatehouse',
          sub: 'f1b9b0e0',
          typ: 'ID',
          azp: 'gatehouse',
          nonce: 'abc',
          sid: 's1',
          at_hash: 'x1',
        },
      },
      // An ID token from a refresh has no nonce (Core 12.2); Keycloak's typ still says what it is.
      {
        header: { typ: 'JWT', alg: 'RS256', kid: 'k' },
        payload: { ...times, aud: 'gatehouse', sub: 'f1b9b0e0', typ: 'ID', azp: 'gatehouse', sid: 's1' },
      },
    ],
  },
  // developer.okta.com: "Token reference" (custom authorization server).
  Okta: {
    access: {
      header: { kid: 'k', alg: 'RS256' },
      payload: {
        ver: 1,
        jti: 'AT.0mP4JKAZX1iACIT4vbEDF7LpvDVjxypPMf0D7uX39RE',
        iss: 'https://dev-1.okta.com/oauth2/default',
        aud: 'api://default',
        sub: '00uid4BxXw6I6TV4m0g3',
        ...times,
        cid: 'nmdP1fcyvdVO11AL7ECm',
        uid: '00uid4BxXw6I6TV4m0g3',
        scp: ['openid', 'email', 'profile'],
      },
    },
    id: [
      {
        header: { kid: 'k', alg: 'RS256' },
        payload: {
          sub: '00uid4BxXw6I6TV4m0g3',
          name: 'John Doe',
          email: 'john.doe@example.com',
          ver: 1,
          iss: 'https://dev-1.okta.com/oauth2/default',
          aud: 'nmdP1fcyvdVO11AL7ECm',
          ...times,
          jti: 'ID.4eAWJOCMB3SX8XewDfVR',
          amr: ['pwd'],
          idp: '00ok1u7AsAkrwdZL3z0g3',
          nonce: 'n-0S6_WzA2Mj',
          auth_time: now,
          at_hash: 'preview_at_hash',
        },
      },
    ],
  },
  // developers.google.com/identity: Google's access tokens are opaque (checked through userinfo); its
  // only JWTs are ID tokens.
  Google: {
    id: [
      {
        header: { alg: 'RS256', kid: 'k', typ: 'JWT' },
        payload: {
          iss: 'https://accounts.google.com',
          azp: '1234987819200.apps.googleusercontent.com',
          aud: '1234987819200.apps.googleusercontent.com',
          sub: '10769150350006150715113082367',
          at_hash: 'HK6E_P6Dh8Y93mRNtsDB1Q',
          email: 'jsmith@example.com',
          email_verified: true,
          ...times,
          nonce: '0394852-3190485-2490358',
        },
      },
      // From a refresh: no at_hash, no nonce (Core 12.2), and still no scope.
      {
        header: { alg: 'RS256', kid: 'k', typ: 'JWT' },
        payload: { iss: 'https://accounts.google.com', aud: 'x', sub: '1', email: 'a@b', ...times },
      },
    ],
  },
  // The bundled provider (oidc-provider): RFC 9068 access tokens, OpenID Connect ID tokens.
  'bundled dev-idp': {
    access: {
      header: { alg: 'RS256', typ: 'at+jwt', kid: 'k' },
      payload: {
        jti: 'j',
        sub: 'alice',
        ...times,
        scope: 'openid profile email',
        client_id: 'gatehouse',
        iss: 'http://localhost:3001',
        aud: 'http://localhost:3000/api',
        roles: ['member'],
      },
    },
    id: [
      {
        header: { alg: 'RS256', kid: 'k' },
        payload: {
          sub: 'alice',
          name: 'Alice Liddell',
          email: 'alice@example.com',
          roles: ['member'],
          nonce: 'n',
          at_hash: 'h',
          aud: 'gatehouse',
          ...times,
          iss: 'http://localhost:3001',
          sid: 's',
          auth_time: now,
        },
      },
    ],
  },
};

describe('notAnAccessToken', () => {
  describe.each(Object.entries(PRESETS))('%s', (_provider, { access, id }) => {
    if (access) {
      it('accepts its access token', () => {
        expect(notAnAccessToken(access.header, access.payload)).toBeUndefined();
      });
    }

    it.each(id.map((sample, index) => [index, sample] as const))(
      'refuses its ID token (%i)',
      (_i, sample) => {
        expect(notAnAccessToken(sample.header, sample.payload)).toMatch(/not an access token/);
      },
    );
  });

  it('trusts typ at+jwt over everything else (RFC 9068 2.1), in either spelling', () => {
    expect(notAnAccessToken({ typ: 'application/at+JWT' }, { sub: 'a' })).toBeUndefined();
  });

  it('names the marker it found', () => {
    expect(notAnAccessToken({ typ: 'JWT' }, { scope: 'openid', nonce: 'n' })).toContain('nonce');
    expect(notAnAccessToken({}, { scope: 'openid', typ: 'Refresh' })).toContain('Refresh');
    expect(notAnAccessToken({}, { sub: 'a' })).toContain('no scp or scope');
  });
});

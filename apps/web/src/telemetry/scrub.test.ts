import { describe, expect, it } from 'vitest';
import { REDACTED, scrubDeep, scrubText } from './scrub';

const jwt = 'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl';

describe('scrubText', () => {
  it('redacts authorization codes, state and session_state in URLs, keeping the rest', () => {
    expect(
      scrubText('http://localhost:3000/callback?code=abc123&state=xyz&iss=http%3A%2F%2Fidp&session_state=s1'),
    ).toBe(
      `http://localhost:3000/callback?code=${REDACTED}&state=${REDACTED}&iss=http%3A%2F%2Fidp&session_state=${REDACTED}`,
    );
    expect(scrubText('/callback#code=abc&state=def')).toBe(`/callback#code=${REDACTED}&state=${REDACTED}`);
    expect(scrubText('/profile?tab=code')).toBe('/profile?tab=code');
  });

  it('redacts tokens in URLs, JWTs anywhere, and bearer credentials', () => {
    expect(scrubText(`https://idp/session/end?id_token_hint=${jwt}&post_logout_redirect_uri=x`)).toBe(
      `https://idp/session/end?id_token_hint=${REDACTED}&post_logout_redirect_uri=x`,
    );
    expect(scrubText(`failed with ${jwt} inside`)).toBe(`failed with ${REDACTED} inside`);
    expect(scrubText('Authorization: Bearer abc.def-ghi')).toBe(`Authorization: Bearer ${REDACTED}`);
  });
});

describe('scrubDeep', () => {
  it('reaches every string of an envelope and drops Authorization values', () => {
    const item = {
      baseData: {
        name: 'GET /callback?code=c1&state=s1',
        properties: { refUri: '/callback?code=c2', headers: { Authorization: 'Bearer secret' } },
        list: [`token=${jwt}`],
      },
      tags: { 'ai.operation.name': '/callback?state=s3' },
    };
    const text = JSON.stringify(scrubDeep(item));
    for (const secret of ['c1', 's1', 'c2', 'secret', jwt, 's3']) expect(text).not.toContain(`=${secret}`);
    expect(text).not.toContain(jwt);
    expect(text).not.toContain('Bearer secret');
  });
});

// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { MAX_FIELD_LENGTH, REDACTED, scrubDeep, scrubText } from './scrub';

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

  it('redacts JWTs after a dash or a dot, cut short, or followed by more text; leaves look-alikes', () => {
    expect(scrubText(`x-${jwt}.tail`)).toBe(`x-${REDACTED}.tail`);
    expect(scrubText(`a.${jwt}`)).toBe(`a.${REDACTED}`);
    expect(scrubText('#eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9')).toBe(`#${REDACTED}`);
    expect(scrubText('keyJar.value and eyJ. and eyJx.')).toBe('keyJar.value and eyJ. and eyJx.');
  });

  // The old pattern /\beyJ[\w-]+\.[\w-]+\.[\w-]*\/g took over 20 s on this input (quadratic): a
  // regression makes this test hang until Vitest's timeout, whatever the machine.
  it('runs in linear time on 400 KB of eyJ-eyJ-… (no backtracking), and still redacts a JWT after it', () => {
    const hostile = 'eyJ-'.repeat(100_000);
    expect(hostile.length).toBe(400_000);
    expect(scrubText(hostile)).toBe(hostile);
    expect(scrubText(`${hostile} ${jwt}`)).toBe(`${hostile} ${REDACTED}`);
    const dotted = 'eyJa.'.repeat(80_000);
    expect(scrubText(dotted)).not.toContain('eyJ');
  });

  it('runs the parameter and bearer patterns in linear time on 400 KB of hostile input too', () => {
    const params = '?code=#state='.repeat(30_000);
    // Each state value runs to the next `#`, swallowing the `?code=` after it.
    expect(scrubText(params)).toBe(`?code=${REDACTED}${`#state=${REDACTED}`.repeat(30_000)}`);
    const spaces = `Bearer${' '.repeat(400_000)}!`;
    expect(scrubText(spaces)).toBe(spaces);
    expect(scrubText('Bearer Bearer '.repeat(30_000))).not.toMatch(/Bearer Bearer/);
  });
});

describe('scrubDeep', () => {
  it('cuts each string to the SDK field limit before scrubbing it', () => {
    const item = { message: `${'x'.repeat(MAX_FIELD_LENGTH - 5)}?code=secret-code-beyond` };
    const message = scrubDeep(item).message;
    expect(message).toHaveLength(MAX_FIELD_LENGTH);
    expect(message).not.toContain('secret');
  });

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

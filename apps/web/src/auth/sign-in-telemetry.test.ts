import { signInFailureReasons, signInSteps } from '@gatehouse/api-contract';
import { errors } from 'jose';
import { ErrorResponse, ErrorTimeout } from 'oidc-client-ts';
import { afterEach, describe, expect, it } from 'vitest';
import { AuthError } from './auth-error';
import { failedCheck } from './id-token';
import { oidcFailureOf as failureOf, toAuthError } from './oidc-errors';
import { SignInTelemetry, type SignInTelemetryEvent } from './sign-in-telemetry';

function recorder() {
  const events: SignInTelemetryEvent[] = [];
  let now = 1_000;
  const journey = new SignInTelemetry(
    (event) => void events.push(event),
    window.sessionStorage,
    () => now,
    failureOf,
  );
  return { events, journey, advance: (ms: number) => (now += ms) };
}

const authorizationError = (error: string, description?: string) =>
  new ErrorResponse({ error, ...(description ? { error_description: description } : {}) });
const tokenEndpointError = (error: string, description?: string) =>
  new ErrorResponse(
    { error, ...(description ? { error_description: description } : {}) },
    new URLSearchParams(),
  );

afterEach(() => window.sessionStorage.clear());

describe('the sign-in journey', () => {
  it('reports started, returned, redeemed and signed-in with the trigger and the time since the start', () => {
    const { events, journey, advance } = recorder();
    journey.started('guarded-page');
    advance(400);
    journey.returned();
    advance(100);
    journey.redeemed();
    advance(50);
    journey.signedIn();
    expect(events).toEqual([
      {
        name: 'gatehouse.sign-in',
        properties: { outcome: 'started', trigger: 'guarded-page' },
        measurements: {},
      },
      {
        name: 'gatehouse.sign-in',
        properties: { outcome: 'returned', trigger: 'guarded-page' },
        measurements: { durationMs: 400 },
      },
      {
        name: 'gatehouse.sign-in',
        properties: { outcome: 'redeemed', trigger: 'guarded-page' },
        measurements: { durationMs: 500 },
      },
      {
        name: 'gatehouse.sign-in',
        properties: { outcome: 'signed-in', trigger: 'guarded-page' },
        measurements: { durationMs: 550 },
      },
    ]);
    // The journey is over: a later callback has neither trigger nor duration.
    journey.returned();
    expect(events.at(-1)).toEqual({
      name: 'gatehouse.sign-in',
      properties: { outcome: 'returned' },
      measurements: {},
    });
  });

  it('reports a journey the user came back from without an answer as cancelled at the provider', () => {
    const { events, journey } = recorder();
    journey.abandoned();
    expect(events).toEqual([]);
    journey.started('button');
    journey.abandoned();
    expect(events.at(-1)?.properties).toEqual({
      outcome: 'failed',
      trigger: 'button',
      step: 'provider',
      reason: 'cancelled',
    });
    journey.abandoned();
    expect(events).toHaveLength(2);
  });

  it('reports a failure before leaving at the start step', () => {
    const { events, journey } = recorder();
    journey.started('button');
    journey.failedToStart(toAuthError(new TypeError('Failed to fetch')));
    expect(events.at(-1)?.properties).toEqual({
      outcome: 'failed',
      trigger: 'button',
      step: 'start',
      reason: 'network',
    });
  });

  it('reports renewals and session ends', () => {
    const { events, journey } = recorder();
    journey.renewal('succeeded');
    journey.renewal('failed', tokenEndpointError('invalid_grant', 'refresh token rt-secret revoked'));
    journey.renewal('failed', new ErrorTimeout('timed out'));
    journey.renewal('forced-sign-in');
    for (const reason of ['expiry', 'sign-out', 'other-tab', 'renewal-failed'] as const)
      journey.sessionEnded(reason);
    expect(events.map(({ name, properties }) => [name, properties])).toEqual([
      ['gatehouse.renewal', { outcome: 'succeeded' }],
      ['gatehouse.renewal', { outcome: 'failed', reason: 'invalid_grant' }],
      ['gatehouse.renewal', { outcome: 'failed', reason: 'network' }],
      ['gatehouse.renewal', { outcome: 'forced-sign-in' }],
      ['gatehouse.session-end', { reason: 'expiry' }],
      ['gatehouse.session-end', { reason: 'sign-out' }],
      ['gatehouse.session-end', { reason: 'other-tab' }],
      ['gatehouse.session-end', { reason: 'renewal-failed' }],
    ]);
  });
});

describe('failureOf', () => {
  const cases: Array<[string, unknown, string, string]> = [
    ['a registered authorization error', authorizationError('access_denied'), 'access_denied', 'provider'],
    ['OIDC login_required', authorizationError('login_required'), 'login_required', 'provider'],
    ['an unregistered code', authorizationError('AADSTS50105'), 'other', 'provider'],
    ['a prototype name as the code', authorizationError('constructor'), 'other', 'provider'],
    ['the token endpoint', tokenEndpointError('invalid_grant'), 'invalid_grant', 'redeem'],
    [
      'the token endpoint, wrapped',
      toAuthError(tokenEndpointError('invalid_client')),
      'invalid_client',
      'redeem',
    ],
    [
      'the provider, wrapped',
      toAuthError(authorizationError('consent_required')),
      'consent_required',
      'provider',
    ],
    ['a state mismatch', new AuthError('state_mismatch', 'x'), 'state_mismatch', 'return'],
    ['the issuer check', new AuthError('issuer_mismatch', 'x'), 'issuer_mismatch', 'redeem'],
    ['no ID token', new AuthError('id_token_invalid', 'x'), 'id_token_missing', 'id-token'],
    [
      'a nonce mismatch',
      new AuthError('id_token_invalid', 'x', { reason: 'nonce_mismatch' }),
      'nonce_mismatch',
      'id-token',
    ],
    [
      'a bad signature',
      new AuthError('id_token_invalid', 'x', { reason: 'id_token_signature' }),
      'id_token_signature',
      'id-token',
    ],
    [
      'clock skew',
      new AuthError('id_token_invalid', 'x', { reason: 'clock_skew' }),
      'clock_skew',
      'id-token',
    ],
    ['userinfo', new AuthError('userinfo_mismatch', 'x'), 'userinfo_mismatch', 'userinfo'],
    ['a timeout', new ErrorTimeout('t'), 'network', 'redeem'],
    ['a failed fetch, wrapped', toAuthError(new TypeError('Failed to fetch')), 'network', 'redeem'],
    ['anything else', new Error('Unexpected token < in JSON'), 'response_invalid', 'redeem'],
  ];
  it.each(cases)('classifies %s', (_, error, reason, step) => {
    expect(failureOf(error, 'redeem')).toEqual({ reason, step });
  });

  it('only ever answers with the vocabulary', () => {
    for (const [, error] of cases) {
      const { reason, step } = failureOf(error, 'redeem');
      expect(signInFailureReasons).toContain(reason);
      expect(signInSteps).toContain(step);
    }
  });
});

describe('failedCheck', () => {
  const now = 1_800_000_000;
  const claims = (extra: Record<string, unknown>) => ({ sub: 's', ...extra });
  it('names the ID token check that failed', () => {
    expect(
      failedCheck(new errors.JWTExpired('x', claims({ iat: now - 30 }), 'exp', 'check_failed'), now),
    ).toBe('id_token_expired');
    expect(
      failedCheck(new errors.JWTClaimValidationFailed('x', claims({}), 'aud', 'check_failed'), now),
    ).toBe('id_token_audience');
    expect(
      failedCheck(new errors.JWTClaimValidationFailed('x', claims({}), 'iss', 'check_failed'), now),
    ).toBe('id_token_issuer');
    expect(failedCheck(new errors.JWTClaimValidationFailed('x', claims({}), 'sub', 'missing'), now)).toBe(
      'id_token_claims',
    );
    expect(failedCheck(new errors.JWSSignatureVerificationFailed(), now)).toBe('id_token_signature');
    expect(failedCheck(new errors.JWKSNoMatchingKey(), now)).toBe('id_token_signature');
    expect(failedCheck(new errors.JWSInvalid(), now)).toBe('id_token_malformed');
  });

  it('puts a time check that fails on a token issued far from this clock down to clock skew', () => {
    const issuedAhead = claims({ iat: now + 600, nbf: now + 600 });
    expect(
      failedCheck(new errors.JWTClaimValidationFailed('x', issuedAhead, 'nbf', 'check_failed'), now),
    ).toBe('clock_skew');
    const issuedLongAgo = claims({ iat: now - 7200 });
    expect(failedCheck(new errors.JWTExpired('x', issuedLongAgo, 'exp', 'check_failed'), now)).toBe(
      'clock_skew',
    );
  });
});

describe('leak scan', () => {
  const secrets = [
    'eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJhbGljZSJ9.c2lnbmF0dXJl',
    'auth-code-7f3a9',
    'rt-secret-41',
    'Alice Liddell',
    'alice@example.com',
    'AADSTS50105: user alice@example.com is not assigned',
  ];

  it('sends no token, code, name or e-mail, whatever the errors carry', () => {
    const { events, journey } = recorder();
    const [jwt = '', code = '', refresh = '', name = '', email = '', description = ''] = secrets;
    const failures: unknown[] = [
      authorizationError('access_denied', description),
      authorizationError(`${email} ${code}`, description),
      tokenEndpointError('invalid_grant', `code ${code} for ${name} was used`),
      toAuthError(tokenEndpointError(jwt, refresh)),
      new AuthError('id_token_invalid', `token ${jwt} of ${email}`, { cause: new Error(jwt) }),
      new AuthError('userinfo_mismatch', `${name} <${email}>`),
      new TypeError(`fetch https://idp.example/token?code=${code} failed`),
      new Error(`${jwt} ${refresh} ${name}`),
    ];
    for (const failure of failures) {
      journey.started('button');
      journey.returned();
      journey.redeemed();
      journey.failed(failure, 'redeem');
      journey.started('expired-session');
      journey.failedToStart(failure);
      journey.renewal('failed', failure);
    }
    journey.started('guarded-page');
    journey.returned();
    journey.signedIn();
    journey.sessionEnded('sign-out');
    const sent = JSON.stringify(events);
    expect(events.length).toBeGreaterThan(50);
    for (const secret of [...secrets, code, 'alice', 'example']) expect(sent).not.toContain(secret);
  });
});

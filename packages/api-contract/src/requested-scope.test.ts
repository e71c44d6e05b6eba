// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { requestedScope } from './requested-scope.js';

describe('requestedScope', () => {
  const configured = 'openid profile email offline_access';

  it('drops the standard scopes a provider does not list, such as offline_access', () => {
    expect(requestedScope(configured, ['openid', 'profile', 'email'])).toBe('openid profile email');
    expect(requestedScope(configured, ['openid'])).toBe('openid');
  });

  it('keeps openid and deployment scopes even when the provider does not advertise them', () => {
    expect(requestedScope('openid offline_access api://app/access_as_user', ['profile'])).toBe(
      'openid api://app/access_as_user',
    );
  });

  it('asks for everything configured when discovery lists no scopes', () => {
    expect(requestedScope(configured, undefined)).toBe(configured);
    expect(requestedScope(`  ${configured} `, 'openid')).toBe(configured);
  });

  it('keeps every scope the provider lists', () => {
    expect(requestedScope(configured, ['openid', 'profile', 'email', 'offline_access', 'phone'])).toBe(
      configured,
    );
  });
});

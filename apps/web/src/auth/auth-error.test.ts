// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { providerErrorSentence } from './auth-error';

describe('providerErrorSentence', () => {
  it('says a known error code as its sentence', () => {
    expect(providerErrorSentence('access_denied')).toMatch(/cancelled or access was denied/);
  });

  // The code comes from the callback's address, which anyone can write.
  it('names an unknown code, even one every object inherits', () => {
    for (const error of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      expect(providerErrorSentence(error)).toBe(`The identity provider refused the sign-in (${error}).`);
  });
});

// @vitest-environment node
import { describe, expect, it } from 'vitest';
import { safeReturnTo } from './return-to';

describe('safeReturnTo', () => {
  it('returns the normalised path, never one a browser would read as another host', () => {
    expect(safeReturnTo('/a/./b/../c')).toBe('/a/c');
    for (const candidate of ['/.//evil.example', '/x/..//evil.example/path']) {
      expect(safeReturnTo(candidate).startsWith('//')).toBe(false);
    }
  });

  it('keeps a path on this origin with its query and fragment', () => {
    expect(safeReturnTo('/profile?tab=1#top')).toBe('/profile?tab=1#top');
  });

  it.each([
    'https://evil.example.com/',
    '//evil.example.com/',
    '/\\evil.example.com',
    'javascript:alert(1)',
    '/callback?code=x',
    '/.//evil.example',
    '/a/..//evil.example',
    '/%2e//evil.example',
    '/./callback?code=x',
    '',
    undefined,
    42,
  ])('falls back to the home page for %s', (candidate) => {
    expect(safeReturnTo(candidate)).toBe('/');
  });
});

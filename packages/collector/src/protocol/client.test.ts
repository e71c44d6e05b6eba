import { describe, expect, it } from 'vitest';
import { clientOf } from './client.js';

const ua = (userAgent: string, hints: Record<string, string> = {}) =>
  clientOf({ 'user-agent': userAgent, ...hints });

describe('clientOf', () => {
  it.each([
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36',
      'Chrome',
      'desktop',
      'Linux',
    ],
    [
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36',
      'Chrome',
      'desktop',
      'Linux',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.0.0',
      'Edge',
      'desktop',
      'Windows',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:133.0) Gecko/20100101 Firefox/133.0',
      'Firefox',
      'desktop',
      'Windows',
    ],
    [
      'Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      'Safari',
      'mobile',
      'iOS',
    ],
    [
      'Mozilla/5.0 (iPad; CPU OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1',
      'Safari',
      'tablet',
      'iOS',
    ],
    [
      'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36',
      'Chrome',
      'mobile',
      'Android',
    ],
    [
      'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/27.0 Chrome/125.0.0.0 Safari/537.36',
      'Samsung Internet',
      'tablet',
      'Android',
    ],
    [
      'Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15',
      'Safari',
      'desktop',
      'macOS',
    ],
    [
      'Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 OPR/116.0.0.0',
      'Opera',
      'desktop',
      'Windows',
    ],
  ])('%s: %s on %s, %s', (userAgent, browser, deviceType, os) => {
    expect(ua(userAgent)).toEqual({ browser, deviceType, os });
  });

  it('takes the mobile client hint over the User-Agent’s reduced tokens', () => {
    const reduced =
      'Mozilla/5.0 (Linux; Android 10; K) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    expect(ua(reduced, { 'sec-ch-ua-mobile': '?1' }).deviceType).toBe('mobile');
    const desktop =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    expect(ua(desktop, { 'sec-ch-ua-mobile': '?1' }).deviceType).toBe('mobile');
  });

  it('takes the platform client hint over the User-Agent', () => {
    const reduced =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    expect(ua(reduced, { 'sec-ch-ua-platform': '"Chrome OS"' }).os).toBe('ChromeOS');
    expect(ua(reduced, { 'sec-ch-ua-platform': '"Unknown"' }).os).toBe('Linux');
    expect(ua('Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) Chrome/131.0.0.0 Safari/537.36').os).toBe('ChromeOS');
  });

  it('takes only its own platform hints, not what every object inherits', () => {
    const linux =
      'Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36';
    for (const platform of ['__proto__', 'constructor', 'toString', 'hasOwnProperty'])
      expect(ua(linux, { 'sec-ch-ua-platform': `"${platform}"` }).os).toBe('Linux');
  });

  it('tells nothing of a client that is no browser', () => {
    const none = { browser: null, deviceType: null, os: null };
    expect(ua('node/v22.12.0 applicationinsights/3.4.0 (Linux x64)')).toEqual(none);
    expect(clientOf({})).toEqual(none);
  });
});

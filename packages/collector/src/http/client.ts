import type { IncomingHttpHeaders } from 'node:http';
import type { BrowserFamily, DeviceType } from '@gatehouse/api-contract';

/** What the collector tells of the client that sent a batch, for every item in it. */
export interface Client {
  browser: BrowserFamily | null;
  deviceType: DeviceType | null;
}

/**
 * Browser families by their User-Agent tokens, the most specific first: Edge, Opera and Samsung Internet
 * also say "Chrome", and every Chromium browser says "Safari".
 */
const BROWSERS: [RegExp, BrowserFamily][] = [
  [/\bEdg(e|A|iOS)?\//, 'Edge'],
  [/\bOPR\/|\bOpera\b/, 'Opera'],
  [/\bSamsungBrowser\//, 'Samsung Internet'],
  [/\bFirefox\/|\bFxiOS\//, 'Firefox'],
  [/\bChrome\/|\bCriOS\/|\bHeadlessChrome\/|\bChromium\//, 'Chrome'],
  [/\bVersion\/[\d.]+.*\bSafari\//, 'Safari'],
];

/**
 * The browser family and device class of the client that sent a batch, from its request headers, as
 * Azure's ingestion fills `client_Browser` from the User-Agent: the browser SDK sets no such tags itself
 * (`ai.device.type` is always "Browser"). `Sec-CH-UA-Mobile` (a low-entropy client hint Chromium sends
 * to secure origins) wins over the User-Agent's tokens, which browsers have reduced. A client that is no
 * browser (a server-side SDK) has neither.
 */
export function clientOf(headers: IncomingHttpHeaders): Client {
  const ua = String(headers['user-agent'] ?? '').slice(0, 512);
  const browser = BROWSERS.find(([pattern]) => pattern.test(ua))?.[1] ?? null;
  if (!browser) return { browser: null, deviceType: null };
  const hint = headers['sec-ch-ua-mobile'];
  const deviceType: DeviceType =
    /\biPad\b|\bTablet\b|\bAndroid\b(?!.*\bMobile\b)/.test(ua) && hint !== '?1'
      ? 'tablet'
      : hint === '?1' || (hint !== '?0' && /\bMobi|\biPhone\b|\bAndroid\b/.test(ua))
        ? 'mobile'
        : 'desktop';
  return { browser, deviceType };
}

import type { IncomingHttpHeaders } from 'node:http';
import type { BrowserFamily, DeviceType, OperatingSystem } from '@gatehouse/api-contract';
import { ownValue } from '../own-property.js';

/** What the collector tells of the client that sent a batch, for every item in it. */
export interface Client {
  browser: BrowserFamily | null;
  deviceType: DeviceType | null;
  os: OperatingSystem | null;
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
 * Operating systems by their User-Agent tokens, the most specific first: iPadOS and iOS say "like Mac OS
 * X", Android says "Linux", ChromeOS says "X11" (docs/decisions/0073-breakdowns.md). An iPad in desktop
 * mode sends a Mac's User-Agent and counts as macOS, as in every analytics tool that reads it.
 */
const SYSTEMS: [RegExp, OperatingSystem][] = [
  [/\biPhone\b|\biPad\b|\biPod\b/, 'iOS'],
  [/\bAndroid\b/, 'Android'],
  [/\bCrOS\b/, 'ChromeOS'],
  [/\bWindows\b/, 'Windows'],
  [/\bMacintosh\b|\bMac OS X\b/, 'macOS'],
  [/\bLinux\b|\bX11\b/, 'Linux'],
];
/** `Sec-CH-UA-Platform`'s values (a quoted string), as the systems above. */
const PLATFORM_HINTS: Record<string, OperatingSystem> = {
  Windows: 'Windows',
  macOS: 'macOS',
  iOS: 'iOS',
  Android: 'Android',
  Linux: 'Linux',
  'Chrome OS': 'ChromeOS',
  'Chromium OS': 'ChromeOS',
};

/**
 * The browser family, device class and operating system of the client that sent a batch, from its request headers, as
 * Azure's ingestion fills `client_Browser` from the User-Agent: the browser SDK sets no such tags itself
 * (`ai.device.type` is always "Browser"). `Sec-CH-UA-Mobile` (a low-entropy client hint Chromium sends
 * to secure origins) wins over the User-Agent's tokens, which browsers have reduced, and so does
 * `Sec-CH-UA-Platform` for the system (Chromium's reduced User-Agent keeps the platform, but not, for
 * example, ChromeOS on every build). A client that is no browser (a server-side SDK) has none of them.
 */
export function clientOf(headers: IncomingHttpHeaders): Client {
  const ua = String(headers['user-agent'] ?? '').slice(0, 512);
  const browser = BROWSERS.find(([pattern]) => pattern.test(ua))?.[1] ?? null;
  if (!browser) return { browser: null, deviceType: null, os: null };
  const hint = headers['sec-ch-ua-mobile'];
  const deviceType: DeviceType =
    /\biPad\b|\bTablet\b|\bAndroid\b(?!.*\bMobile\b)/.test(ua) && hint !== '?1'
      ? 'tablet'
      : hint === '?1' || (hint !== '?0' && /\bMobi|\biPhone\b|\bAndroid\b/.test(ua))
        ? 'mobile'
        : 'desktop';
  const platform = String(headers['sec-ch-ua-platform'] ?? '').replace(/^"|"$/g, '');
  const os = ownValue(PLATFORM_HINTS, platform) ?? SYSTEMS.find(([pattern]) => pattern.test(ua))?.[1] ?? null;
  return { browser, deviceType, os };
}

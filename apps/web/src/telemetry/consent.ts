import { REFERRED_KEY } from './referrer';

/** The visitor's telemetry choice, remembered in this browser. The key is not an `ai_*` entry. */
export type ConsentChoice = 'granted' | 'denied';
export type ConsentState = ConsentChoice | 'ask' | 'implied';

const KEY = 'gatehouse.telemetry-consent';

export function storedChoice(storage?: Storage): ConsentChoice | null {
  try {
    const value = (storage ?? localStorage).getItem(KEY);
    return value === 'granted' || value === 'denied' ? value : null;
  } catch {
    return null;
  }
}

export function storeChoice(choice: ConsentChoice, storage: Storage = localStorage): void {
  try {
    storage.setItem(KEY, choice);
  } catch {
    // Storage may be unavailable (privacy mode); the choice then lasts for this page only.
  }
}

/**
 * Removes everything the SDK kept in this browser: `ai_*` cookies and `ai_*`/`AI_*` storage entries, and
 * the mark that this tab's visit has sent its referrer (referrer.ts): a fresh identity is a fresh visit.
 */
export function forgetTelemetryState(): void {
  forgetSdkEntries(/^ai_/i);
  sessionStorage.removeItem(REFERRED_KEY);
}

/** Removes the SDK's session id (its cookie, and the backup it keeps in storage): the next item starts a new one. */
export function forgetSessionId(): void {
  forgetSdkEntries(/^ai_session$/i);
}

function forgetSdkEntries(name: RegExp): void {
  for (const cookie of document.cookie.split(';')) {
    const key = cookie.split('=')[0]?.trim();
    if (key && name.test(key)) document.cookie = `${key}=; Max-Age=0; path=/`;
  }
  for (const storage of [localStorage, sessionStorage]) {
    for (const key of Object.keys(storage)) if (name.test(key)) storage.removeItem(key);
  }
}

/**
 * The anonymous ids this tab sees in the SDK's cookies (`ai_user` is `id|created`, `ai_session`
 * `id|acquired|renewed`), '' where there is none.
 */
export function storedIds(): { user: string; session: string } {
  const id = (name: string) => {
    const cookie = document.cookie.split('; ').find((entry) => entry.startsWith(`${name}=`));
    return decodeURIComponent(cookie?.slice(name.length + 1) ?? '').split('|')[0] ?? '';
  };
  return { user: id('ai_user'), session: id('ai_session') };
}

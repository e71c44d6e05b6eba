import { REFERRED_KEY } from './referrer';

/** The visitor's telemetry choice, remembered in this browser. The key is not an `ai_*` entry. */
export type ConsentChoice = 'granted' | 'denied';
export type ConsentState = ConsentChoice | 'ask' | 'implied';

const KEY = 'gatehouse.telemetry-consent';

export function storedChoice(storage: Storage = localStorage): ConsentChoice | null {
  try {
    const value = storage.getItem(KEY);
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
  for (const cookie of document.cookie.split(';')) {
    const name = cookie.split('=')[0]?.trim();
    if (name && /^ai_/i.test(name)) document.cookie = `${name}=; Max-Age=0; path=/`;
  }
  for (const storage of [localStorage, sessionStorage]) {
    for (const key of Object.keys(storage)) if (/^ai_/i.test(key)) storage.removeItem(key);
  }
  sessionStorage.removeItem(REFERRED_KEY);
}

import { afterEach, describe, expect, it } from 'vitest';
import type { AuthUser } from './auth-state';
import {
  markSessionSomewhere,
  readSessionHint,
  sessionMaybeSomewhere,
  SESSION_HINT_KEY,
  writeSessionHint,
} from './session-hint';

const NOW_MS = 1_800_000_000_000;
const user: AuthUser = {
  issuer: 'http://localhost:3001',
  sub: 'alice',
  name: 'Alice',
  email: 'alice@example.com',
  roles: ['member'],
  expiresAt: NOW_MS / 1000 + 300,
  renewsAt: NOW_MS / 1000 + 240,
};

afterEach(() => window.sessionStorage.clear());

describe('the session hint', () => {
  it('gives back the user it was given', () => {
    writeSessionHint(window.sessionStorage, user);
    expect(readSessionHint(window.sessionStorage, NOW_MS)).toEqual(user);
  });

  it('is gone once written as null (signed out)', () => {
    writeSessionHint(window.sessionStorage, user);
    writeSessionHint(window.sessionStorage, null);
    expect(readSessionHint(window.sessionStorage, NOW_MS)).toBeNull();
  });

  it('is ignored when the tokens have expired and cannot be renewed', () => {
    writeSessionHint(window.sessionStorage, { ...user, expiresAt: NOW_MS / 1000 - 1, renewsAt: null });
    expect(readSessionHint(window.sessionStorage, NOW_MS)).toBeNull();
  });

  it('is kept when the tokens have expired but can be renewed', () => {
    writeSessionHint(window.sessionStorage, { ...user, expiresAt: NOW_MS / 1000 - 1 });
    expect(readSessionHint(window.sessionStorage, NOW_MS)).not.toBeNull();
  });

  it.each([
    ['not JSON', '{'],
    ['not a user', '{"sub":"alice"}'],
    ['roles that are not strings', JSON.stringify({ ...user, roles: [1] })],
  ])('is ignored when it is %s', (_what, stored) => {
    window.sessionStorage.setItem(SESSION_HINT_KEY, stored);
    expect(readSessionHint(window.sessionStorage, NOW_MS)).toBeNull();
  });
});

describe('the mark that some tab holds a session', () => {
  it('is absent until a session is shown, and gone once it ends', () => {
    const storage = window.localStorage;
    storage.clear();
    expect(sessionMaybeSomewhere(storage)).toBe(false);
    markSessionSomewhere(storage, true);
    expect(sessionMaybeSomewhere(storage)).toBe(true);
    markSessionSomewhere(storage, false);
    expect(sessionMaybeSomewhere(storage)).toBe(false);
  });

  it('says a session may exist where storage cannot be read', () => {
    const refusing = {
      getItem: () => {
        throw new DOMException('denied', 'SecurityError');
      },
    } as unknown as Storage;
    expect(sessionMaybeSomewhere(refusing)).toBe(true);
  });
});

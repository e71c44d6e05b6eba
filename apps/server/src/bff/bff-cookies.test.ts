import type { Request, Response } from 'express';
import { describe, expect, it } from 'vitest';
import { bffCookies } from './bff.js';

/** What `res.cookie` / `res.clearCookie` were asked to write, as Express would serialise them. */
function recorder() {
  const written: { name: string; value: string; options: Record<string, unknown> }[] = [];
  const res = {
    cookie: (name: string, value: string, options: Record<string, unknown>) =>
      written.push({ name, value, options }),
    clearCookie: (name: string, options: Record<string, unknown>) =>
      written.push({ name, value: '', options }),
  } as unknown as Response;
  return { res, written };
}

describe('the BFF cookies', () => {
  it('are __Host- cookies on https: Secure, HttpOnly, the whole origin, SameSite Strict for the session', () => {
    const cookies = bffCookies('https://app.example.com');
    const { res, written } = recorder();
    cookies.session.set(res, 'id', 60_000);
    cookies.login.set(res, 'binder', 1_000);
    expect(written).toEqual([
      {
        name: '__Host-gatehouse-session',
        value: 'id',
        options: { httpOnly: true, secure: true, path: '/', sameSite: 'strict', maxAge: 60_000 },
      },
      {
        name: '__Host-gatehouse-login',
        value: 'binder',
        options: { httpOnly: true, secure: true, path: '/', sameSite: 'lax', maxAge: 1_000 },
      },
    ]);
    expect(
      cookies.session.of({
        headers: { cookie: 'gatehouse-session=x; __Host-gatehouse-session=y' },
      } as Request),
    ).toBe('y');
  });

  it('drop the prefix and Secure on a plain-http loopback origin, which WebKit would not keep them from', () => {
    const cookies = bffCookies('http://localhost:3000');
    const { res, written } = recorder();
    cookies.session.clear(res);
    expect(written).toEqual([
      {
        name: 'gatehouse-session',
        value: '',
        options: { httpOnly: true, secure: false, path: '/', sameSite: 'strict', maxAge: 0 },
      },
    ]);
    // Only the name of this origin's kind is read.
    expect(
      cookies.session.of({ headers: { cookie: '__Host-gatehouse-session=y' } } as Request),
    ).toBeUndefined();
  });
});

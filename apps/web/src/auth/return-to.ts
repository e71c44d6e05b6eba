/**
 * Where to go after sign-in: a path on this origin only, so a crafted link cannot turn the
 * sign-in into an open redirect.
 */
export function safeReturnTo(candidate: unknown): string {
  if (typeof candidate !== 'string' || !candidate.startsWith('/') || candidate.startsWith('//')) return '/';
  // Backslashes and control characters let some parsers read a path as another host.
  if ([...candidate].some((char) => char === '\\' || char.charCodeAt(0) < 0x20)) return '/';
  try {
    const url = new URL(candidate, 'https://gatehouse.invalid');
    // Checked after normalisation: `/.//evil.example` becomes `//evil.example`, a host to the browser.
    if (url.origin !== 'https://gatehouse.invalid' || url.pathname.startsWith('//')) return '/';
    if (url.pathname.startsWith('/callback')) return '/';
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return '/';
  }
}

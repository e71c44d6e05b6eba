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
    if (url.origin !== 'https://gatehouse.invalid' || url.pathname.startsWith('/callback')) return '/';
    return `${url.pathname}${url.search}${url.hash}`;
  } catch {
    return '/';
  }
}

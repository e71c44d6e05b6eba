import type { Express, Request } from 'express';

/**
 * Which proxies' `X-Forwarded-*` headers the server believes: exactly `hops` of them (0: none, the
 * connection is the client). Express is given the count, not `true`: with `true` it takes the
 * left-most `X-Forwarded-For` entry as `req.ip`, and that entry is the client's to write. With a count
 * it walks from the right, past one entry per trusted proxy, which is the collector's rule
 * (`clientAddress` in @gatehouse/collector): behind one proxy, the right-most entry, the one it added.
 *
 * `req.protocol` (and `req.secure`, which decides HSTS) follows the same rule: Express reads the
 * left-most `X-Forwarded-Proto` value, which a proxy that appends leaves as the client sent it; here it
 * is the value of the outermost trusted proxy, counted from the right (the only one, when the proxies
 * replace the header, as nginx's `proxy_set_header` and HAProxy's `set-header` do).
 */
export function trustProxies(app: Express, hops: number): void {
  app.set('trust proxy', hops > 0 ? hops : false);
  if (hops <= 0) return;
  Object.defineProperty(app.request, 'protocol', {
    configurable: true,
    enumerable: true,
    get(this: Request): string {
      const own = (this.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
      const values = String(this.headers['x-forwarded-proto'] ?? '')
        .split(',')
        .map((value) => value.trim())
        .filter(Boolean);
      if (values.length === 0) return own;
      const value = values[Math.max(0, values.length - hops)]?.toLowerCase();
      return value === 'https' || value === 'http' ? value : own;
    },
  });
}

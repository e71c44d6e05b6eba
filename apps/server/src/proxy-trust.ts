import { clientAddress, compileTrust, trustedHops, type TrustProxySetting } from '@gatehouse/collector';
import type { Express, Request } from 'express';

/**
 * Which proxies' `X-Forwarded-*` headers the server believes (TRUST_PROXY): their addresses and ranges,
 * believed only when the connection (or the entry after it) comes from one of them; or a count of hops,
 * believed from whoever connects. One trust function (`compileTrust`, proxy-addr's, as Express's own)
 * serves Express and the collector, so `req.ip` is the collector's per-source address.
 *
 * `req.ip` is the collector's `clientAddress`: Express's walk from the right, with the port some proxies
 * add stripped, and the connection's address for an entry that is no address. `req.protocol` (and
 * `req.secure`, which decides HSTS) is the value of the outermost trusted proxy, counted from the right:
 * Express reads the left-most `X-Forwarded-Proto` value, which a proxy that appends leaves as the client
 * sent it (the only one, when the proxies replace the header, as nginx's `proxy_set_header` and
 * HAProxy's `set-header` do).
 */
export function trustProxies(app: Express, setting: TrustProxySetting): void {
  const trust = compileTrust(setting);
  app.set('trust proxy', trust);
  Object.defineProperty(app.request, 'ip', {
    configurable: true,
    enumerable: true,
    get(this: Request): string {
      return clientAddress(this, trust);
    },
  });
  Object.defineProperty(app.request, 'protocol', {
    configurable: true,
    enumerable: true,
    get(this: Request): string {
      const own = (this.socket as { encrypted?: boolean }).encrypted ? 'https' : 'http';
      const hops = trustedHops(this, trust);
      if (hops <= 0) return own;
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

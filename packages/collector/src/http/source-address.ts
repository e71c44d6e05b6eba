import type { IncomingMessage } from 'node:http';
import { isIP, isIPv4, isIPv6 } from 'node:net';
import proxyaddr from 'proxy-addr';

/**
 * Which peers' `X-Forwarded-For` (and `X-Forwarded-Proto`) are believed: `address` is the connection's
 * address (`hop` 0) or an `X-Forwarded-For` entry counted from the right (`hop` 1, 2, ...), with any
 * port already stripped. Express's `trust proxy` takes the same function.
 */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * The proxies trusted: a count of hops (each adding one `X-Forwarded-For` entry; believed from whoever
 * connects), or the proxies' addresses, CIDR ranges and the names `loopback`, `linklocal` and
 * `uniquelocal` (believed only from them: what Express's `trust proxy` takes). `true` is one hop.
 */
export type TrustProxySetting = boolean | number | readonly string[];

/**
 * The trust function for a setting, as Express compiles its `trust proxy` (proxy-addr): a count trusts
 * the first `n` hops whatever their address; a list trusts exactly those addresses. Throws a TypeError
 * naming an entry that is neither an address, a range nor a known name.
 */
export function compileTrust(setting: TrustProxySetting | undefined): ProxyTrust {
  if (typeof setting === 'object') {
    if (setting.length === 0) return () => false;
    const trusted = proxyaddr.compile([...setting]);
    return (address, hop) => trusted(withoutPort(address), hop);
  }
  const hops = setting === true ? 1 : setting || 0;
  return (_address, hop) => hop < hops;
}

/**
 * An address without the port some proxies add (`203.0.113.9:5012`, `[2001:db8::1]:443`, as Azure App
 * Service and Application Gateway write `X-Forwarded-For`), so that one client is one source whatever
 * connection it came on. Anything else is returned as it is.
 */
export function withoutPort(entry: string): string {
  const text = entry.trim();
  const bracketed = /^\[([^\]]+)\](?::\d+)?$/.exec(text);
  if (bracketed) return bracketed[1] ?? text;
  const v4 = /^(\d{1,3}(?:\.\d{1,3}){3}):\d+$/.exec(text);
  return v4?.[1] ?? text;
}

/**
 * The client's address, for per-source limits: walking from the connection towards the client, past
 * every peer `trust` believes, the first one it does not (or the left-most entry); its port stripped.
 * This is Express's `req.ip` with the same trust (proxy-addr), so the app and the collector agree. An
 * entry that is no address (garbage a client wrote past a trusted proxy that appends) is not a source
 * of its own: the connection's address stands for it, so it cannot mint a fresh bucket per request.
 */
export function clientAddress(req: IncomingMessage, trust: ProxyTrust): string {
  const connection = req.socket.remoteAddress ?? '';
  const address = withoutPort(proxyaddr(req, trust));
  return isIP(address) === 0 && isIP(address.split('%', 1)[0] ?? '') === 0 ? connection : address;
}

/**
 * How many proxies in front of this request are trusted, counted from the connection: 0 when the
 * connection itself is not from a trusted proxy; otherwise at least 1 (a proxy may set
 * `X-Forwarded-Proto` without `X-Forwarded-For`), plus each trusted entry after it.
 */
export function trustedHops(req: IncomingMessage, trust: ProxyTrust): number {
  if (!trust(req.socket.remoteAddress ?? '', 0)) return 0;
  return Math.max(1, proxyaddr.all(req, trust).length - 1);
}

/** The 16-bit groups of an IPv6 address (`net.isIPv6` true), a trailing dotted quad as two of them. */
function ipv6Groups(address: string): number[] {
  let text = address;
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const parse = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = parse(head);
  const right = tail === undefined ? [] : parse(tail);
  return [...left, ...Array<number>(8 - left.length - right.length).fill(0), ...right];
}

/**
 * The key of a client address's per-source buckets (the collector's item and byte buckets, and any
 * bucket kept for it elsewhere, e.g. in Redis): an IPv4 address as it is; an IPv6 address as its /64,
 * the prefix one subscriber gets (RFC 6177), so a sender rotating through its /64 stays one source; an
 * IPv4-mapped IPv6 address (`::ffff:192.0.2.1`, how a dual-stack socket shows IPv4) as the IPv4
 * address. Anything else (an `X-Forwarded-For` entry that is no address) is keyed as written.
 */
export function sourceKey(address: string): string {
  const bare = address.trim().replace(/^\[(.*)\]$/, '$1');
  if (isIPv4(bare)) return bare;
  // A zone index (fe80::1%eth0) names the sender's interface, not the sender.
  const ip = bare.split('%', 1)[0] ?? '';
  if (!isIPv6(ip)) return address;
  const groups = ipv6Groups(ip.toLowerCase());
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [hi = 0, lo = 0] = groups.slice(6);
    return `${hi >> 8}.${hi & 0xff}.${lo >> 8}.${lo & 0xff}`;
  }
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}

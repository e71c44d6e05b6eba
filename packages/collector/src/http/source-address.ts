import type { IncomingMessage } from 'node:http';
import { isIPv4, isIPv6 } from 'node:net';

/**
 * The client's address, for per-source limits: behind `hops` trusted proxies (each adding one
 * `X-Forwarded-For` entry), the entry `hops` places from the right, the one the outermost of them
 * added (the entries before it are the client's to write, so a limit keyed on them could be dodged);
 * the left-most when there are fewer entries; else the connection's address. This is what Express
 * makes `req.ip` with `trust proxy` set to the same count (apps/server/src/proxy-trust.ts).
 */
export function clientAddress(req: IncomingMessage, hops: number): string {
  const connection = req.socket.remoteAddress ?? '';
  if (hops <= 0) return connection;
  // Node joins repeated X-Forwarded-For headers with ', '.
  const entries = String(req.headers['x-forwarded-for'] ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  return entries[Math.max(0, entries.length - hops)] ?? connection;
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

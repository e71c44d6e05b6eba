import { describe, expect, it } from 'vitest';
import { RateLimits } from './rate-limit.js';
import type { IncomingMessage } from 'node:http';
import { clientAddress, compileTrust, trustedHops, withoutPort } from './source-address.js';
import { sourceKey } from './source-address.js';

describe('sourceKey', () => {
  it('keys IPv4 by the whole address, IPv4-mapped IPv6 as IPv4, IPv6 by its /64', () => {
    expect(sourceKey('203.0.113.7')).toBe('203.0.113.7');
    expect(sourceKey('::ffff:203.0.113.7')).toBe('203.0.113.7');
    expect(sourceKey('::FFFF:cb00:7107')).toBe('203.0.113.7');
    expect(sourceKey('2001:db8:1:2:3:4:5:6')).toBe('2001:db8:1:2::/64');
    expect(sourceKey('2001:0DB8:0001:0002::9')).toBe('2001:db8:1:2::/64');
    expect(sourceKey('[2001:db8:1:2::9]')).toBe('2001:db8:1:2::/64');
    expect(sourceKey('fe80::1%eth0')).toBe('fe80:0:0:0::/64');
    expect(sourceKey('::1')).toBe('0:0:0:0::/64');
    expect(sourceKey('2001:db8::')).toBe('2001:db8:0:0::/64');
    // The next /64 is another subscriber.
    expect(sourceKey('2001:db8:1:3::9')).toBe('2001:db8:1:3::/64');
    // Not an address (a proxy's own notation): as written, never merged with an address.
    expect(sourceKey('unknown')).toBe('unknown');
  });

  it('gives every address a sender rotates through in its /64 one bucket, and other senders their own', () => {
    const limits = new RateLimits(undefined, 100, () => 0);
    let granted = 0;
    for (let i = 0; i < 1000; i++) {
      const rotating = `2001:db8:aa:bb:${((i * 7919) & 0xffff).toString(16)}:${i.toString(16)}:1:2`;
      granted += limits.grant(sourceKey(rotating), 10).granted;
    }
    // One bucket's worth, not 1,000 fresh buckets of 10 items.
    expect(granted).toBe(100);
    expect(limits.grant(sourceKey('2001:db8:aa:bc::1'), 10).granted).toBe(10);
    expect(limits.grant(sourceKey('198.51.100.1'), 10).granted).toBe(10);
    expect(limits.grant(sourceKey('::ffff:198.51.100.1'), 100).granted).toBe(90);
  });
});

/** A request as the collector sees it: the connection's address and the headers. */
const request = (remoteAddress: string, forwardedFor?: string) =>
  ({
    socket: { remoteAddress },
    connection: { remoteAddress },
    headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
  }) as unknown as IncomingMessage;

describe('clientAddress', () => {
  it('believes X-Forwarded-For only from the proxies trusted by address or range', () => {
    const trust = compileTrust(['10.0.0.0/8', '192.0.2.1']);
    // From the balancer: the entry it added.
    expect(clientAddress(request('10.1.2.3', '198.51.100.66, 203.0.113.9'), trust)).toBe('203.0.113.9');
    // Through two trusted proxies: past both.
    expect(clientAddress(request('10.1.2.3', '203.0.113.9, 192.0.2.1'), trust)).toBe('203.0.113.9');
    // Straight from a client: its header is nobody's word.
    expect(clientAddress(request('198.51.100.7', '203.0.113.9'), trust)).toBe('198.51.100.7');
    expect(trustedHops(request('198.51.100.7', '203.0.113.9'), trust)).toBe(0);
    expect(trustedHops(request('10.1.2.3', '203.0.113.9, 192.0.2.1'), trust)).toBe(2);
    expect(trustedHops(request('10.1.2.3'), trust)).toBe(1);
  });

  it('strips the port a proxy wrote, and keys what is no address by the connection', () => {
    const trust = compileTrust(['10.0.0.1']);
    expect(clientAddress(request('10.0.0.1', '203.0.113.9:5012'), trust)).toBe('203.0.113.9');
    expect(clientAddress(request('10.0.0.1', '[2001:db8::7]:443'), trust)).toBe('2001:db8::7');
    expect(clientAddress(request('10.0.0.1', 'unknown'), trust)).toBe('10.0.0.1');
    expect(clientAddress(request('10.0.0.1', '__proto__'), trust)).toBe('10.0.0.1');
    // A trusted proxy's own entry with a port is still that proxy.
    expect(clientAddress(request('10.0.0.1', '203.0.113.9, 10.0.0.1:80'), trust)).toBe('203.0.113.9');
  });

  it('keeps the hop count (`true`: one), believed from whoever connects', () => {
    expect(clientAddress(request('127.0.0.1', '192.0.2.9, 203.0.113.1'), compileTrust(true))).toBe(
      '203.0.113.1',
    );
    expect(clientAddress(request('127.0.0.1', '192.0.2.9, 203.0.113.1'), compileTrust(2))).toBe('192.0.2.9');
    expect(clientAddress(request('127.0.0.1', '203.0.113.1'), compileTrust(0))).toBe('127.0.0.1');
    expect(clientAddress(request('127.0.0.1', '203.0.113.1'), compileTrust([]))).toBe('127.0.0.1');
  });

  it('refuses a trust entry that is no address, range or name', () => {
    expect(() => compileTrust(['balancer.internal'])).toThrow(TypeError);
  });

  it('strips ports from IPv4 and bracketed IPv6 only', () => {
    expect(withoutPort('203.0.113.9:80')).toBe('203.0.113.9');
    expect(withoutPort('[::1]:80')).toBe('::1');
    expect(withoutPort('[::1]')).toBe('::1');
    expect(withoutPort('2001:db8::1')).toBe('2001:db8::1');
  });
});

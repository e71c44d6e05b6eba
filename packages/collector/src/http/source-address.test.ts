import { describe, expect, it } from 'vitest';
import { RateLimits } from './rate-limit.js';
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

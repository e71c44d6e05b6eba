import { describe, expect, it } from 'vitest';
import { TokenFactsCache, TokenRefusedError, type TokenFacts } from './opaque-token.js';

function counting(facts: TokenFacts) {
  const load = () => {
    load.calls += 1;
    return Promise.resolve(facts);
  };
  load.calls = 0;
  return load;
}

describe('TokenFactsCache', () => {
  it('reuses an answer within its TTL and asks again after', async () => {
    let now = 1000;
    const cache = new TokenFactsCache({ ttlSeconds: 30, maxEntries: 10, now: () => now });
    const load = counting({ claims: { sub: 'a' }, expiresAt: undefined });
    await cache.get('t', load);
    now = 1029;
    await cache.get('t', load);
    expect(load.calls).toBe(1);
    now = 1030;
    await cache.get('t', load);
    expect(load.calls).toBe(2);
  });

  it("never keeps an answer beyond the token's exp", async () => {
    let now = 1000;
    const cache = new TokenFactsCache({ ttlSeconds: 30, maxEntries: 10, now: () => now });
    const load = counting({ claims: { sub: 'a' }, expiresAt: 1005 });
    await cache.get('t', load);
    now = 1005;
    await cache.get('t', load);
    expect(load.calls).toBe(2);
  });

  it('holds at most maxEntries tokens, dropping the oldest', async () => {
    const cache = new TokenFactsCache({ ttlSeconds: 30, maxEntries: 2, now: () => 1000 });
    const load = counting({ claims: {}, expiresAt: undefined });
    for (const token of ['a', 'b', 'c']) await cache.get(token, load);
    expect(cache.size).toBe(2);
    await cache.get('c', load);
    await cache.get('b', load);
    expect(load.calls).toBe(3);
    await cache.get('a', load);
    expect(load.calls).toBe(4);
  });

  it('keeps no refusal, and shares one pending question between concurrent calls', async () => {
    const cache = new TokenFactsCache({ ttlSeconds: 30, maxEntries: 10, now: () => 1000 });
    let calls = 0;
    const refuse = () => {
      calls += 1;
      return Promise.reject(new TokenRefusedError('no'));
    };
    await expect(cache.get('t', refuse)).rejects.toThrow('no');
    await expect(cache.get('t', refuse)).rejects.toThrow('no');
    expect(calls).toBe(2);
    const load = counting({ claims: {}, expiresAt: undefined });
    await Promise.all([cache.get('u', load), cache.get('u', load)]);
    expect(load.calls).toBe(1);
    expect(cache.size).toBe(1);
  });
});

import { describe, expect, it } from 'vitest';
import { isReady, Readiness } from './health.js';

describe('Readiness', () => {
  it('is ok when every check passes, and failing (naming the check) when one does not', async () => {
    let redis = true;
    const readiness = new Readiness({ cacheMs: 0 })
      .add('store', () => true)
      .add('redis', () => Promise.resolve(redis));
    expect(await readiness.report()).toEqual({ status: 'ok', checks: { store: 'ok', redis: 'ok' } });
    redis = false;
    expect(await readiness.report()).toEqual({
      status: 'failing',
      checks: { store: 'ok', redis: 'failing' },
    });
  });

  it("is degraded, not failing, when only a shared dependency's check fails, and ready either way", async () => {
    let redis = true;
    let store = true;
    const readiness = new Readiness({ cacheMs: 0 })
      .add('store', () => store)
      .add('redis', () => redis, { shared: true });
    redis = false;
    const degraded = await readiness.report();
    expect(degraded).toEqual({ status: 'degraded', checks: { store: 'ok', redis: 'failing' } });
    expect(isReady(degraded)).toBe(true);
    store = false;
    const failing = await readiness.report();
    expect(failing).toEqual({ status: 'failing', checks: { store: 'failing', redis: 'failing' } });
    expect(isReady(failing)).toBe(false);
    readiness.drain();
    expect(isReady(await readiness.report())).toBe(false);
  });

  it('reports a throwing or hung check as failing, without its message, and tells the log why', async () => {
    const changes: unknown[][] = [];
    const readiness = new Readiness({
      cacheMs: 0,
      timeoutMs: 20,
      onChange: (...change) => changes.push(change),
    })
      .add('provider', () => Promise.reject(new Error('GET http://idp.internal/.well-known answered 500')))
      .add('redis', () => new Promise<boolean>(() => undefined));
    const report = await readiness.report();
    expect(report).toEqual({ status: 'failing', checks: { provider: 'failing', redis: 'failing' } });
    expect(JSON.stringify(report)).not.toContain('idp.internal');
    expect(changes).toEqual([
      ['provider', 'failing', 'GET http://idp.internal/.well-known answered 500'],
      ['redis', 'failing', 'no answer within 20 ms'],
    ]);
    // Said once per change, not on every probe.
    await readiness.report();
    expect(changes).toHaveLength(2);
  });

  it('reuses a report for cacheMs, and concurrent probes share one round of checks', async () => {
    let now = 0;
    let calls = 0;
    const readiness = new Readiness({ cacheMs: 1000, now: () => now }).add('redis', () => {
      calls++;
      return true;
    });
    await Promise.all([readiness.report(), readiness.report(), readiness.report()]);
    expect(calls).toBe(1);
    now = 999;
    await readiness.report();
    expect(calls).toBe(1);
    now = 1000;
    await readiness.report();
    expect(calls).toBe(2);
  });

  it('fails at once when draining, whatever the cached checks say', async () => {
    const readiness = new Readiness({ cacheMs: 60_000 }).add('store', () => true);
    expect((await readiness.report()).status).toBe('ok');
    readiness.drain();
    expect(await readiness.report()).toEqual({ status: 'draining', checks: { store: 'ok' } });
  });
});

/**
 * The official Node.js SDK (applicationinsights 2.x) against a collector on 127.0.0.1: it posts
 * gzipped newline-delimited JSON to /v2.1/track, and its retry rules must work with our answers.
 */
import { randomUUID } from 'node:crypto';
import { rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type * as applicationinsights from 'applicationinsights';
import type { TelemetryClient } from 'applicationinsights';
import type { BreezeResponse } from '../http/collector.js';
import type { Envelope, WritableStore } from '../store/store.js';
import { availabilityProbe } from '../test-support/sdk-telemetry.js';
import { startTestCollector, type TestCollector } from '../test-support/server.js';

type SdkModule = typeof applicationinsights;
let sdk: SdkModule;
beforeAll(async () => {
  // Statsbeat would report to Microsoft's endpoints; it reads this once, before the first client.
  process.env.APPLICATION_INSIGHTS_NO_STATSBEAT = 'true';
  const mod = (await import('applicationinsights')) as SdkModule & { default?: SdkModule };
  sdk = mod.default ?? mod;
});

let running: TestCollector | undefined;
const retryDirs: string[] = [];
afterEach(async () => {
  await running?.close();
  running = undefined;
  for (const dir of retryDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function client(origin: string, iKey: string): TelemetryClient {
  const c = new sdk.TelemetryClient(`InstrumentationKey=${iKey};IngestionEndpoint=${origin}`);
  c.config.maxBatchSize = 1000;
  return c;
}

/** Sends what the client holds; resolves to the collector's answer as the SDK saw it. */
function flush(c: TelemetryClient): Promise<string> {
  return new Promise((resolve) => c.flush({ callback: (response: string) => resolve(response) }));
}

describe('applicationinsights 2.x (Node.js SDK)', () => {
  it('stores every kind it tracks, findable in the store and in the export', async () => {
    const iKey = randomUUID();
    running = await startTestCollector({ instrumentationKeys: [iKey] });
    const c = client(running.origin, iKey);
    c.trackEvent({ name: 'signed-in', properties: { provider: 'dev-idp' }, measurements: { ms: 12 } });
    c.trackException({ exception: new TypeError('profile missing') });
    c.trackMetric({ name: 'queue-length', value: 3 });
    c.trackTrace({ message: 'server started', severity: sdk.Contracts.SeverityLevel.Information });
    c.trackRequest({ name: 'GET /api/me', url: '/api/me', duration: 12, resultCode: 200, success: true });
    c.trackDependency({
      target: 'idp.example',
      name: 'POST /token',
      data: 'POST https://idp.example/token',
      duration: 40,
      resultCode: 502,
      success: false,
      dependencyTypeName: 'HTTP',
    });
    c.trackPageView({ name: 'Home', url: 'https://gatehouse.example/', duration: 250 });
    c.trackAvailability(availabilityProbe);

    const answer = JSON.parse(await flush(c)) as BreezeResponse;
    expect(answer).toEqual({ itemsReceived: 8, itemsAccepted: 8, errors: [] });

    const store = running.collector.store;
    for (const type of [
      'event',
      'exception',
      'metric',
      'trace',
      'request',
      'dependency',
      'pageview',
      'availability',
    ] as const) {
      expect(await store.count({ type }), type).toBe(1);
    }
    const exported: Envelope[] = [];
    for await (const e of store.export()) exported.push(e);
    expect(exported.map((e) => e.data.baseType).sort()).toEqual([
      'AvailabilityData',
      'EventData',
      'ExceptionData',
      'MessageData',
      'MetricData',
      'PageViewData',
      'RemoteDependencyData',
      'RequestData',
    ]);
    expect(
      exported.every((e) => e.iKey === iKey && e.name.startsWith('Microsoft.ApplicationInsights.')),
    ).toBe(true);
    const exception = exported.find((e) => e.data.baseType === 'ExceptionData');
    expect(JSON.stringify(exception)).toContain('profile missing');
  });

  it('keeps what a 503 refused on disk and resends it once the store is back', async () => {
    const iKey = randomUUID();
    retryDirs.push(path.join(tmpdir(), `appInsights-node${iKey}`));
    running = await startTestCollector({ instrumentationKeys: [iKey] });
    const store = running.collector.store;
    const append = store.append.bind(store);
    store.append = () => Promise.reject(new Error('store offline'));

    const c = client(running.origin, iKey);
    c.channel.setUseDiskRetryCaching(true, 200);
    c.trackEvent({ name: 'during-outage' });
    const refused = JSON.parse(await flush(c)) as BreezeResponse;
    expect(refused.errors).toEqual([
      { index: 0, statusCode: 503, message: 'Store is unavailable; retry later.' },
    ]);

    store.append = append;
    c.trackEvent({ name: 'after-outage' });
    expect(JSON.parse(await flush(c))).toMatchObject({ itemsAccepted: 1 });
    // A 200 makes the SDK send what it kept on disk after the resend interval.
    await vi.waitFor(async () => expect(await store.count()).toBe(2), { timeout: 10_000, interval: 50 });
    const names: unknown[] = [];
    for await (const e of store.export()) names.push(e.data.baseData.name);
    expect(names.sort()).toEqual(['after-outage', 'during-outage']);
  });

  it('resends every item of a 250-item batch the collector shed with 503, once it recovers', async () => {
    const iKey = randomUUID();
    retryDirs.push(path.join(tmpdir(), `appInsights-node${iKey}`));
    running = await startTestCollector({ instrumentationKeys: [iKey] });
    const store = running.collector.store as WritableStore;
    const pending = store.pending.bind(store);
    store.pending = () => 10_000_000; // the store is behind: every batch is shed before validation

    const c = client(running.origin, iKey);
    c.channel.setUseDiskRetryCaching(true, 200);
    for (let i = 0; i < 250; i++) c.trackEvent({ name: `shed-${i}` });
    const shed = JSON.parse(await flush(c)) as BreezeResponse;
    // Every item is named, so the SDK keeps all 250 on disk rather than the first one.
    expect(shed.errors.map((e) => [e.index, e.statusCode])).toEqual(
      Array.from({ length: 250 }, (_, i) => [i, 503]),
    );

    store.pending = pending;
    c.trackEvent({ name: 'after-recovery' });
    expect(JSON.parse(await flush(c))).toMatchObject({ itemsAccepted: 1 });
    await expect.poll(() => store.count(), { timeout: 10_000 }).toBe(251);
    const names = new Set<unknown>();
    for await (const e of store.export()) names.add(e.data.baseData.name);
    expect(names.size).toBe(251);
  });
});

import { afterEach, describe, expect, it, vi } from 'vitest';
import { startSdk, type TelemetrySdk } from './sdk';

const CONNECTION =
  'InstrumentationKey=00000000-0000-4000-8000-000000000000;IngestionEndpoint=http://collector.test/';

/** The envelopes the SDK posts: it sends with XMLHttpRequest, the beacon being off (telemetry-settings.ts). */
function captureSends(): { envelopes: () => Record<string, unknown>[] } {
  const bodies: unknown[] = [];
  vi.spyOn(XMLHttpRequest.prototype, 'send').mockImplementation((body) => void bodies.push(body));
  return {
    envelopes: () =>
      bodies.flatMap((body) => {
        if (typeof body !== 'string') throw new TypeError(`The SDK sent a ${typeof body}, not text.`);
        return JSON.parse(body) as Record<string, unknown>[];
      }),
  };
}

describe('the SDK wrapper', () => {
  let sdk: TelemetrySdk | undefined;
  afterEach(() => {
    sdk?.unload();
    sdk = undefined;
  });

  it("reports a call in the call's trace, after the page has started another operation", () => {
    const sent = captureSends();
    sdk = startSdk(CONNECTION, window.location.origin);
    const callTrace = 'a'.repeat(32);
    sdk.startOperation('Profile', callTrace);
    sdk.startOperation('Home', 'b'.repeat(32));
    sdk.trackDependency({
      spanId: 'c'.repeat(16),
      traceId: callTrace,
      method: 'GET',
      url: `${window.location.origin}/api/me?page=2`,
      status: 200,
      durationMs: 12,
      startTime: new Date(),
    });
    sdk.trackMetric('after', 1, {});
    sdk.flush();
    const dependency = sent.envelopes().find((e) => String(e.name).endsWith('RemoteDependency'));
    expect(dependency?.tags).toMatchObject({ 'ai.operation.id': callTrace });
    // The SDK sends the host of the URL it is given as the target, and the name as the data.
    expect(dependency?.data).toMatchObject({
      baseData: { target: window.location.host, name: 'GET /api/me', data: 'GET /api/me' },
    });
    const metric = sent.envelopes().find((e) => String(e.name).endsWith('Metric'));
    expect(metric?.tags).toMatchObject({ 'ai.operation.id': 'b'.repeat(32) });
  });
});

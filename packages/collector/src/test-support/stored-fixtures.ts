import { expect } from 'vitest';
import { browserRequest } from './browser-envelopes.js';
import { startTestCollector, type TestCollector } from './server.js';

/**
 * A collector holding `envelopes`, sent through the ingestion path as the browser SDK sends them, with a
 * time window wide enough for fixtures dated up to `pastDays` back.
 */
export async function collectorWith(envelopes: object[], pastDays = 3): Promise<TestCollector> {
  const running = await startTestCollector({
    retentionDays: 0,
    timeWindow: { pastMs: pastDays * 86_400_000 },
  });
  const { body, headers } = browserRequest(envelopes);
  const response = await fetch(`${running.origin}/v2/track`, { method: 'POST', body, headers });
  expect(await response.json()).toMatchObject({ itemsAccepted: envelopes.length, errors: [] });
  return running;
}

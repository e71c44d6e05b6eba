/**
 * The official Node.js SDK 3.x (applicationinsights 3.x, built on OpenTelemetry and the Azure Monitor
 * exporter) against a collector served over TLS on 127.0.0.1: the SDK rewrites http:// ingestion
 * endpoints to https://, sends JSON arrays, severities by name, and resends what a 503 refused.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { Envelope, WritableStore } from '../store/store.js';
import { availabilityProbe, sdk3ChildEnv } from '../test-support/sdk-telemetry.js';
import { startTestCollector, type TestCollector } from '../test-support/server.js';
import { selfSignedCertificate, type TestCertificate } from '../test-support/tls.js';

const CHILD = fileURLToPath(new URL('../test-support/sdk3-child.mjs', import.meta.url));

let certificate: TestCertificate;
beforeAll(() => {
  certificate = selfSignedCertificate();
});
afterAll(() => certificate.remove());

let running: TestCollector | undefined;
let child: ChildProcess | undefined;
const dirs: string[] = [];
afterEach(async () => {
  child?.kill();
  child = undefined;
  await running?.close();
  running = undefined;
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

/** Starts the SDK in a child process that trusts the test's certificate; resolves once it is ready. */
async function startSdk(origin: string, iKey: string): Promise<(message: object) => Promise<void>> {
  // The exporter persists refused batches under os.tmpdir(): one of the test's own.
  const tmp = mkdtempSync(path.join(tmpdir(), 'gatehouse-sdk3-'));
  dirs.push(tmp);
  const sdk = fork(CHILD, [`InstrumentationKey=${iKey};IngestionEndpoint=${origin}/`], {
    env: {
      ...sdk3ChildEnv(certificate.certFile, tmp),
      // Every span (the default samples at most 5 traces a second, dropping some at start-up), and
      // metrics exported every second rather than every minute.
      OTEL_TRACES_SAMPLER: 'always_on',
      OTEL_METRIC_EXPORT_INTERVAL: '1000',
    },
    stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    // Not the test worker's Node flags: Vitest runs it with Vite's resolve conditions (`module` among
    // them), under which Node would load @opentelemetry/api's ESM build, which Node itself cannot load.
    execArgv: [],
  });
  child = sdk;
  const next = () =>
    new Promise<void>((resolve, reject) => {
      sdk.once('message', () => resolve());
      sdk.once('exit', (code) => reject(new Error(`the SDK's process exited (${code})`)));
    });
  await next();
  return async (message) => {
    const answered = next();
    sdk.send(message);
    await answered;
  };
}

async function exported(store: TestCollector['collector']['store']): Promise<Envelope[]> {
  const all: Envelope[] = [];
  for await (const e of store.export()) all.push(e);
  return all;
}

const severities = ['Verbose', 'Information', 'Warning', 'Error', 'Critical'];
const everyKind = [
  'AvailabilityData',
  'EventData',
  'ExceptionData',
  'MetricData',
  'PageViewData',
  'RemoteDependencyData',
  'RequestData',
  ...severities.map(() => 'MessageData'),
].sort();

describe('applicationinsights 3.x (Node.js SDK on the Azure Monitor exporter), over TLS', () => {
  it('stores every kind it tracks, severities by name stored as their numbers', async () => {
    const iKey = randomUUID();
    running = await startTestCollector({ instrumentationKeys: [iKey] }, {}, certificate);
    // The SDK is given http:// and rewrites it to https://, as it does for every user.
    const send = await startSdk(running.origin.replace('https://', 'http://'), iKey);
    await send({ track: 'every-kind', availability: availabilityProbe });
    const store = running.collector.store;
    // Logs, spans and metrics leave through three exporters; wait until each has delivered.
    const ours = async () =>
      (await exported(store)).filter(
        (e) => e.data.baseType !== 'MetricData' || JSON.stringify(e).includes('queue-length'),
      );
    await expect
      .poll(async () => (await ours()).map((e) => e.data.baseType).sort(), { timeout: 30_000 })
      .toEqual(everyKind);

    const items = await ours();
    const baseData = (type: string) =>
      items.filter((e) => e.data.baseType === type).map((e) => e.data.baseData);
    expect(baseData('MessageData').map((d) => [d.message, d.severityLevel])).toEqual(
      expect.arrayContaining(severities.map((name, level) => [`trace at ${name}`, level])),
    );
    expect(baseData('ExceptionData')[0]).toMatchObject({ severityLevel: 3 });
    expect(baseData('AvailabilityData')[0]).toMatchObject({
      id: availabilityProbe.id,
      name: availabilityProbe.name,
      duration: '00:00:01.500',
      success: false,
      runLocation: availabilityProbe.runLocation,
      message: availabilityProbe.message,
    });
    expect(items.every((e) => e.iKey === iKey)).toBe(true);
    expect(await store.count({ type: 'availability' })).toBe(1);
    expect(await store.count({ type: 'trace' })).toBe(5);
  }, 60_000);

  it('resends every item of a batch the collector shed with 503, once it recovers', async () => {
    const iKey = randomUUID();
    running = await startTestCollector(
      { instrumentationKeys: [iKey], retryAfterSeconds: 1 },
      {},
      certificate,
    );
    const store = running.collector.store as WritableStore;
    const pending = store.pending.bind(store);
    store.pending = () => 10_000_000; // the store is behind: every batch is shed
    const send = await startSdk(running.origin, iKey);
    await send({ track: 'events', count: 300, prefix: 'shed' });
    expect(running.logs.some(([, m]) => m.startsWith('store is behind'))).toBe(true);
    expect(await store.count()).toBe(0);

    store.pending = pending;
    const names = async () => {
      const found = new Set<unknown>();
      for (const e of await exported(store)) found.add(e.data.baseData.name);
      return found.size;
    };
    await expect.poll(names, { timeout: 30_000 }).toBe(300);
    expect(await store.count()).toBe(300);
  }, 60_000);
});

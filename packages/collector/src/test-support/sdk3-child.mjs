// The Node.js SDK 3.x (applicationinsights 3.x on the Azure Monitor OpenTelemetry exporter) in a process
// of its own: it installs global OpenTelemetry providers, and it trusts the test's self-signed
// certificate only through NODE_EXTRA_CA_CERTS, which Node reads at start-up.
// Usage: fork('sdk3-child.mjs', [connectionString]); send { track: 'every-kind', availability } or
// { track: 'events', count, prefix }; it answers { flushed: true } once the SDK's flush resolved and
// keeps running (it resends what it persisted after a 503) until sent { exit: true }.
import appInsights from 'applicationinsights-3';

const client = new appInsights.TelemetryClient(process.argv[2]);
// Only what the test tracks: no automatic requests, dependencies, performance counters or console.
Object.assign(client.config, {
  enableAutoCollectRequests: false,
  enableAutoCollectDependencies: false,
  enableAutoCollectPerformance: false,
  enableAutoCollectPreAggregatedMetrics: false,
  enableAutoCollectExceptions: false,
  enableAutoCollectConsole: false,
  enableAutoCollectHeartbeat: false,
  enableSendLiveMetrics: false,
});

function trackEveryKind(availability) {
  client.trackEvent({ name: 'signed-in', properties: { provider: 'dev-idp' }, measurements: { ms: 12 } });
  client.trackException({ exception: new TypeError('profile missing'), severity: 'Error' });
  client.trackMetric({ name: 'queue-length', value: 3 });
  for (const severity of ['Verbose', 'Information', 'Warning', 'Error', 'Critical'])
    client.trackTrace({ message: `trace at ${severity}`, severity });
  client.trackRequest({
    name: 'GET /api/me',
    url: 'https://gatehouse.example/api/me',
    duration: 12,
    resultCode: '200',
    success: true,
  });
  client.trackDependency({
    target: 'idp.example',
    name: 'POST /token',
    data: 'POST https://idp.example/token',
    duration: 40,
    resultCode: '502',
    success: false,
    dependencyTypeName: 'HTTP',
  });
  client.trackAvailability(availability);
  client.trackPageView({ name: 'Home', url: 'https://gatehouse.example/', duration: 250 });
}

const severities = ['Verbose', 'Information', 'Warning', 'Error', 'Critical'];

/** One item of a mixed stream (the bench's payloads): traces most, as a server app sends. */
function trackOne(i, availability) {
  switch (i % 8) {
    case 0:
      return client.trackEvent({ name: 'signed-in', properties: { provider: 'dev-idp', n: String(i) } });
    case 1:
      return client.trackException({ exception: new TypeError(`profile missing ${i}`), severity: 'Error' });
    case 2:
      return client.trackAvailability(availability);
    case 3:
      return client.trackPageView({ name: 'Home', url: 'https://gatehouse.example/', duration: 250 });
    default:
      return client.trackTrace({ message: `request ${i} handled`, severity: severities[i % 5] });
  }
}

process.on('message', async (message) => {
  if (message.exit) {
    await client.shutdown().catch(() => undefined);
    process.exit(0);
  }
  if (message.track === 'every-kind') trackEveryKind(message.availability);
  else if (message.track === 'mixed')
    for (let i = 0; i < message.count; i++) trackOne(i, message.availability);
  else for (let i = 0; i < message.count; i++) client.trackEvent({ name: `${message.prefix}-${i}` });
  await client.flush();
  process.send({ flushed: true });
});
process.send({ ready: true });

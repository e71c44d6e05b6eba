#!/usr/bin/env node
import { createCollector, defaultHttpLimits } from '@gatehouse/collector';
import { createApp } from './app.js';
import { startBundledProvider } from './bundled-provider.js';
import { ConfigError, loadConfig } from './config.js';
import { DevWeb } from './dev-web.js';
import { Readiness } from './health.js';
import { listen } from './listen.js';
import { trackRequests } from './shutdown.js';
import { loadTelemetryUserIds } from './telemetry-user-id.js';

/** Starts Gatehouse: the local OpenID provider when none is configured, then the app server. */
async function main() {
  const config = loadConfig(process.env);
  const closers: Array<() => Promise<void>> = [];
  let authority = config.oidc.authority;

  if (authority === undefined) {
    const idp = await startBundledProvider(config);
    closers.push(() => idp.close());
    authority = idp.issuer;
  }

  const collector = await createCollector({
    dataDir: config.collector.dataDir,
    instrumentationKeys: config.collector.instrumentationKeys,
    allowedOrigins: [config.publicOrigin],
    retentionDays: config.collector.retentionDays,
    ...(config.collector.maxItemsPerSecond ? { maxItemsPerSecond: config.collector.maxItemsPerSecond } : {}),
    ...(config.collector.maxItemsPerSecondPerSource
      ? { maxItemsPerSecondPerSource: config.collector.maxItemsPerSecondPerSource }
      : {}),
    maxItemsPerRequest: config.collector.maxItemsPerRequest,
    maxStoreBytes: config.collector.maxStoreBytes,
    // The same client address Express's `trust proxy` gives the rest of the app.
    trustProxy: config.trustProxy,
    log: (level, message) => (level === 'info' ? console.info : console.warn)(`collector: ${message}`),
  });
  closers.push(() => collector.close());

  // `--dev` (npm run dev): the SPA from its sources through Vite, with hot module replacement.
  const devWeb = process.argv.includes('--dev')
    ? new DevWeb(new URL('../../web/', import.meta.url))
    : undefined;
  const readiness = new Readiness({
    onChange: (name, state, reason) =>
      (state === 'ok' ? console.info : console.warn)(
        `readiness: ${name} is ${state}${reason ? ` (${reason})` : ''}`,
      ),
  });
  readiness.add('store', () => collector.ready());

  const app = createApp({
    config,
    authority,
    webRoot: new URL('../../web/dist/', import.meta.url),
    devWeb,
    collector,
    usage: collector.usage,
    analytics: collector.analytics,
    telemetryUserIds: await loadTelemetryUserIds(config.telemetry.userIdSecrets, config.collector.dataDir),
    readiness,
  });
  // Node's defaults wait 300 s for a request and take any number of connections: not on a public port.
  const server = await listen(app, config.port, config.tls, { ...defaultHttpLimits, ...config.http });
  await devWeb?.listening(server);
  const requests = trackRequests(server);

  console.info(`Gatehouse is running at ${config.publicOrigin} (listening on port ${config.port})`);
  console.info(
    `Identity provider: ${authority}${config.oidc.authority ? '' : ' (local, for development only)'}`,
  );
  console.info('Press Ctrl-C to stop.');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C: do not wait for the requests in flight (the store is still flushed).
      console.info(`${signal} received again: cutting ${requests.inFlight} requests in flight.`);
      requests.cut();
      return;
    }
    stopping = true;
    const { delayMs, timeoutMs } = config.shutdown;
    console.info(
      `${signal} received: draining (readiness fails now; the listener closes in ${delayMs / 1000} s, ` +
        `requests in flight get ${timeoutMs / 1000} s).`,
    );
    // In order: fail readiness, let the balancer notice, stop taking connections and finish the
    // requests in flight, then close what they used (the collector flushes its store).
    readiness.drain();
    void (async () => {
      // Development: Vite's HMR websocket would hold the listener open until the drain's time-out.
      await devWeb?.close();
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      const { cut } = await requests.drain(timeoutMs);
      if (cut > 0)
        console.warn(
          `shutdown: ${cut} requests were still in flight after ${timeoutMs / 1000} s and were cut.`,
        );
      for (const close of closers) await close().catch((error: unknown) => console.warn(String(error)));
      console.info('stopped.');
      process.exit(0);
    })();
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((error: unknown) => {
  console.error(error instanceof ConfigError ? error.message : error);
  process.exit(1);
});

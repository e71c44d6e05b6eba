#!/usr/bin/env node
import { createCollector, defaultHttpLimits } from '@gatehouse/collector';
import { createApp } from './app.js';
import { startBundledProvider } from './bundled-provider.js';
import { ConfigError, loadConfig } from './config.js';
import { DevWeb } from './dev-web.js';
import { listen } from './listen.js';
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
  if (devWeb) closers.push(() => devWeb.close());

  const app = createApp({
    config,
    authority,
    webRoot: new URL('../../web/dist/', import.meta.url),
    devWeb,
    collector,
    usage: collector.usage,
    analytics: collector.analytics,
    telemetryUserIds: await loadTelemetryUserIds(config.telemetry.userIdSecrets, config.collector.dataDir),
  });
  // Node's defaults wait 300 s for a request and take any number of connections: not on a public port.
  const server = await listen(app, config.port, config.tls, { ...defaultHttpLimits, ...config.http });
  await devWeb?.listening(server);
  closers.unshift(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );

  console.info(`Gatehouse is running at ${config.publicOrigin} (listening on port ${config.port})`);
  console.info(
    `Identity provider: ${authority}${config.oidc.authority ? '' : ' (local, for development only)'}`,
  );
  console.info('Press Ctrl-C to stop.');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    console.info(`${signal} received: stopping.`);
    // In order: stop taking requests, then close what they used (the collector flushes its store).
    void (async () => {
      for (const close of closers) await close().catch((error: unknown) => console.warn(String(error)));
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

#!/usr/bin/env node
import {
  createLogAnalyticsQueries,
  dashboardQueries,
  defaultHttpLimits,
  logAnalyticsRunner,
  runOnLogAnalytics,
} from '@gatehouse/collector';
import { join } from 'node:path';
import { createApp } from './app.js';
import { FileBackend, RedisBackend } from './bff/session-store.js';
import { createRefusalMetrics } from './auth/refusal-metrics.js';
import { startBundledProvider } from './bundled-provider.js';
import { ConfigError, loadConfig } from './config.js';
import { DevWeb, devDeniedPaths } from './dev-web.js';
import { Readiness } from './health.js';
import { listen } from './listen.js';
import { createLogger } from './log.js';
import { trackRequests } from './shutdown.js';
import { startTelemetryStore } from './telemetry-store.js';
import { loadTelemetryUserIds } from './telemetry-user-id.js';
import type { UsageSource } from './usage.js';

/** Starts Gatehouse: the local OpenID provider when none is configured, then the app server. */
async function main() {
  // `--dev` (npm run dev): the SPA from its sources through Vite, with hot module replacement.
  const dev = process.argv.includes('--dev');
  const config = loadConfig(process.env, { dev });
  const logger = createLogger(config.logLevel);
  const closers: Array<() => Promise<void>> = [];
  let authority = config.oidc.authority;

  if (authority === undefined) {
    const idp = await startBundledProvider(config, (line) => logger.info({ component: 'dev-idp' }, line));
    closers.push(() => idp.close());
    authority = idp.issuer;
  }

  // What replicas must agree on (docs/decisions/0062): in Redis when configured, else in this process.
  // (Its Redis client is loaded only then: a quarter of a second of CPU at every start without Redis.)
  const shared =
    config.redisUrl === undefined
      ? undefined
      : new (await import('./shared-state.js')).SharedState({ url: config.redisUrl, logger });
  await shared?.connect();
  if (
    typeof config.trustProxy === 'number' &&
    config.trustProxy > 0 &&
    config.collector.token !== undefined
  ) {
    logger.warn(
      'TRUST_PROXY counts hops: X-Forwarded-For is believed from whoever connects, and replicas are ' +
        "reachable without the balancer (the store holder must be); set TRUST_PROXY to the balancer's " +
        'addresses or ranges (docs/replicas.md)',
    );
  }
  if (process.env.OIDC_TOKEN_STORE !== undefined) {
    logger.warn(
      'OIDC_TOKEN_STORE is no longer read: the browser keeps its tokens in the token vault, out of the ' +
        "page's reach, whatever it says (docs/configuration.md); remove it",
    );
  }
  if (!shared && config.collector.token !== undefined) {
    logger.warn(
      'several replicas (COLLECTOR_TOKEN) without REDIS_URL: each keeps its own DPoP replay table and ' +
        'rate limits, so a proof refused by one is accepted by another (docs/replicas.md)',
    );
  }
  const {
    maxItemsPerSecond,
    maxItemsPerSecondPerSource,
    maxBytesPerSecondPerSource,
    maxBytesBurstPerSource,
  } = config.collector;
  const telemetry = await startTelemetryStore(
    config,
    (level, message) => logger[level]({ component: 'collector' }, message),
    shared && (maxItemsPerSecond || maxItemsPerSecondPerSource)
      ? shared.rateLimiter(maxItemsPerSecond, maxItemsPerSecondPerSource)
      : undefined,
    shared && maxBytesPerSecondPerSource
      ? shared.rateLimiter(undefined, maxBytesPerSecondPerSource, maxBytesBurstPerSource, 'bytes')
      : undefined,
  );
  closers.push(() => telemetry.collector.close());
  // Last: the requests drained and the collector flushed may still check proofs and take tokens.
  if (shared) closers.push(() => shared.close());

  // The dashboard's source: the workspace when one is configured, else the local store (if any).
  const { logAnalytics } = config.telemetry;
  let { usage, dashboard } = telemetry;
  let source: UsageSource | undefined = usage ? { kind: 'local' } : undefined;
  if (logAnalytics) {
    const run = await logAnalyticsRunner({
      workspaceId: logAnalytics.workspaceId,
      ...(logAnalytics.endpoint ? { endpoint: logAnalytics.endpoint } : {}),
    });
    const workspace = createLogAnalyticsQueries(run);
    usage = workspace.usage;
    dashboard = runOnLogAnalytics(dashboardQueries, run, { resourceId: logAnalytics.resourceId });
    source = { kind: 'log-analytics', freshness: () => workspace.freshness() };
  }

  // The API's refusals, by reason, once a minute into the same store as the browser's telemetry.
  const refusals = createRefusalMetrics({
    connectionString: config.telemetry.connectionString,
    log: { warn: (fields, message) => logger.warn(fields, message) },
  });
  refusals?.start();

  const devWeb = dev ? new DevWeb(new URL('../../web/', import.meta.url), devDeniedPaths(config)) : undefined;
  const readiness = new Readiness({
    onChange: (name, state, reason) =>
      logger[state === 'ok' ? 'info' : 'warn'](
        { component: 'readiness', check: name, state, reason },
        `readiness: ${name} is ${state}${reason ? ` (${reason})` : ''}`,
      ),
  });
  // The store is this replica's own, except on a forwarding replica, where it is the store holder's:
  // every forwarding replica shares it, so while it restarts they stay ready (and hold or refuse items).
  readiness.add('store', () => telemetry.ready(), { shared: telemetry.role === 'forwarding' });
  // Redis is every replica's: its outage degrades readiness (shown, logged), never fails it.
  if (shared) readiness.add('redis', () => shared.ping(), { shared: true });

  const app = createApp({
    config,
    authority,
    webRoot: new URL('../../web/dist/', import.meta.url),
    devWeb,
    collector: telemetry.collector,
    usage,
    dashboard,
    ...(source ? { usageSource: source } : {}),
    // Kept in the store even when the figures come from Azure Monitor (docs/annotations.md).
    annotations: telemetry.annotations,
    internalApi: telemetry.internalApi,
    telemetryUserIds: await loadTelemetryUserIds(config.telemetry.userIdSecrets, config.collector.dataDir),
    readiness,
    logger,
    refusals,
    ...(shared ? { replay: shared.replayTable() } : {}),
    ...(config.bff
      ? {
          // Redis serves every replica's sessions; without it they stay in this replica's data folder.
          bffStore: shared
            ? new RedisBackend(shared.redis, `${shared.prefix}bff:`)
            : new FileBackend(join(config.collector.dataDir, 'bff-sessions')),
        }
      : {}),
  });
  // Node's defaults wait 300 s for a request and take any number of connections: not on a public port.
  const server = await listen(
    app,
    config.port,
    config.tls,
    { ...defaultHttpLimits, ...config.http },
    config.listenHost,
  );
  await devWeb?.listening(server);
  const requests = trackRequests(server);

  const listening = config.listenHost
    ? `${config.listenHost} only, port ${config.port}`
    : `port ${config.port}`;
  const running = `Gatehouse is running at ${config.publicOrigin} (listening on ${listening})`;
  const provider = `${authority}${config.oidc.authority ? '' : ' (local, for development only)'}`;
  if (process.stdout.isTTY) {
    // `npm start` in a terminal: a banner for the person who typed it.
    console.info(`${running}\nIdentity provider: ${provider}\nPress Ctrl-C to stop.`);
  } else {
    logger.info({ publicOrigin: config.publicOrigin, port: config.port, authority }, running);
  }
  if (telemetry.role === 'forwarding')
    logger.info(
      { collectorUrl: config.collector.forwardTo },
      'telemetry store: held by the store holder, forwarding to it',
    );
  else if (telemetry.role === 'store holder')
    logger.info('telemetry store: held here, and served to the other replicas (COLLECTOR_TOKEN)');

  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) {
      // A second Ctrl-C: do not wait for the requests in flight (the store is still flushed).
      logger.warn(`${signal} received again: cutting ${requests.inFlight} requests in flight.`);
      requests.cut();
      return;
    }
    stopping = true;
    const { delayMs, timeoutMs } = config.shutdown;
    logger.info(
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
      // While the listener still takes connections: with the built-in collector, the counts go to this
      // very server. Refusals of the requests still in flight after this are not sent.
      await refusals?.close();
      const { cut } = await requests.drain(timeoutMs);
      if (cut > 0) {
        logger.warn(
          `shutdown: ${cut} requests were still in flight after ${timeoutMs / 1000} s and were cut.`,
        );
      }
      for (const close of closers) {
        await close().catch((error: unknown) => logger.warn({ err: error }, `shutdown: ${String(error)}`));
      }
      logger.info('stopped.');
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

#!/usr/bin/env node
// CLI: node apps/dev-idp/dist/main.js (settings from the environment, see env.ts).
import { ConfigError } from '@gatehouse/config';
import { readDevIdpEnv } from './env.js';
import { startDevIdp } from './index.js';

async function main(): Promise<void> {
  let settings;
  try {
    settings = readDevIdpEnv(process.env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    console.error(error.message);
    process.exitCode = 1;
    return;
  }

  const idp = await startDevIdp({
    port: settings.port,
    appOrigin: settings.appOrigin,
    testControls: settings.testControls,
    ...(settings.testControlsSecret === undefined ? {} : { testControlsSecret: settings.testControlsSecret }),
    accessTokenTtlSeconds: settings.accessTokenTtlSeconds,
    clientSecret: settings.clientSecret,
  });

  let closing = false;
  const stop = (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    console.info(`dev-idp: ${signal} received, closing.`);
    idp.close().then(
      () => process.exit(0),
      (error: unknown) => {
        console.error('dev-idp: failed to close cleanly:', error);
        process.exit(1);
      },
    );
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

await main();

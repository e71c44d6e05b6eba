import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { ConfigError, type ServerConfig } from './config.js';

export type GatehouseServer = http.Server | https.Server;

/**
 * Serves `app` on `port`: over https with the configured certificate and key (TLS_CERT_FILE,
 * TLS_KEY_FILE), else over plain http. The Node.js SDK 3.x and the Azure Monitor exporter rewrite an
 * `http://` ingestion endpoint to `https://`, so a server-side app reaches the collector only over TLS.
 */
export async function listen(
  app: http.RequestListener,
  port: number,
  tls: ServerConfig['tls'],
  host?: string,
): Promise<GatehouseServer> {
  const server = tls ? https.createServer(readTls(tls), app) : http.createServer(app);
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  return server;
}

function readTls(tls: NonNullable<ServerConfig['tls']>): https.ServerOptions {
  const read = (key: string, file: string) => {
    try {
      return readFileSync(file);
    } catch (error) {
      throw new ConfigError(`Gatehouse cannot start: ${key} '${file}' cannot be read (${String(error)}).`);
    }
  };
  return { cert: read('TLS_CERT_FILE', tls.certFile), key: read('TLS_KEY_FILE', tls.keyFile) };
}

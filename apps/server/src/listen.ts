import { readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { httpServerOptions, limitServer, type HttpLimits } from '@gatehouse/collector';
import { ConfigError, type ServerConfig } from './config.js';

export type GatehouseServer = http.Server | https.Server;

/**
 * Serves `app` on `port`: over https with the configured certificate and key (TLS_CERT_FILE,
 * TLS_KEY_FILE), else over plain http. The Node.js SDK 3.x and the Azure Monitor exporter rewrite an
 * `http://` ingestion endpoint to `https://`, so a server-side app reaches the collector only over TLS.
 * Either way with the request, header and connection limits of `limits`.
 */
export async function listen(
  app: http.RequestListener,
  port: number,
  tls: ServerConfig['tls'],
  limits: HttpLimits,
  host?: string,
): Promise<GatehouseServer> {
  const options = httpServerOptions(limits);
  const server = tls
    ? https.createServer({ ...options, ...readTls(tls) }, app)
    : http.createServer(options, app);
  limitServer(server, limits);
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

import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { defaultHttpLimits } from '@gatehouse/collector';
import { createApp } from './app.js';
import { ConfigError, loadConfig } from './config.js';
import { listen, type GatehouseServer } from './listen.js';

const dir = mkdtempSync(join(tmpdir(), 'gatehouse-listen-'));
const certFile = join(dir, 'cert.pem');
const keyFile = join(dir, 'key.pem');
execFileSync(
  'openssl',
  ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-days', '1'].concat([
    '-subj',
    '/CN=localhost',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
    '-keyout',
    keyFile,
    '-out',
    certFile,
  ]),
  { stdio: 'pipe' },
);
const servers: GatehouseServer[] = [];
afterAll(async () => {
  for (const server of servers) await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** GET over https, trusting only the test's certificate. */
function get(url: string): Promise<{ status: number; headers: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    https
      .get(url, { ca: readFileSync(certFile) }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers }));
      })
      .on('error', reject);
  });
}

describe('listen', () => {
  it('serves Gatehouse over https on its own port with TLS_CERT_FILE and TLS_KEY_FILE, with HSTS', async () => {
    const config = loadConfig({
      OIDC_AUTHORITY: 'http://127.0.0.1:9',
      OIDC_CLIENT_ID: 'gatehouse',
      TLS_CERT_FILE: certFile,
      TLS_KEY_FILE: keyFile,
    });
    expect(config.publicOrigin).toBe('https://localhost:3000');
    const webRoot = mkdtempSync(join(dir, 'web-'));
    const app = createApp({
      config,
      authority: 'http://127.0.0.1:9',
      webRoot: pathToFileURL(`${webRoot}/`),
      fetchImpl: () => Promise.reject(new TypeError('fetch failed')),
    });
    const server = await listen(app, 0, config.tls, defaultHttpLimits, '127.0.0.1');
    servers.push(server);
    const { port } = server.address() as AddressInfo;
    const answer = await get(`https://127.0.0.1:${port}/api/me`);
    expect(answer.status).toBe(401); // the API answered, over TLS
    expect(answer.headers['strict-transport-security']).toBe('max-age=31536000; includeSubDomains');
  });

  it('refuses to start when a TLS file cannot be read, naming the key', async () => {
    const tls = { certFile, keyFile: join(dir, 'missing.pem') };
    await expect(listen(() => undefined, 0, tls, defaultHttpLimits, '127.0.0.1')).rejects.toThrow(
      ConfigError,
    );
    await expect(listen(() => undefined, 0, tls, defaultHttpLimits, '127.0.0.1')).rejects.toThrow(
      /TLS_KEY_FILE/,
    );
  });
});

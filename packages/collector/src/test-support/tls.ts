/** A throwaway self-signed certificate for 127.0.0.1 and localhost, made with the openssl CLI. */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

export interface TestCertificate {
  certFile: string;
  keyFile: string;
  cert: Buffer;
  key: Buffer;
  remove(): void;
}

export function selfSignedCertificate(): TestCertificate {
  const dir = mkdtempSync(path.join(tmpdir(), 'gatehouse-tls-'));
  const certFile = path.join(dir, 'cert.pem');
  const keyFile = path.join(dir, 'key.pem');
  // P-256 rather than RSA: made in milliseconds, and every TLS client takes it.
  execFileSync(
    'openssl',
    [
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-days',
      '1',
      '-subj',
      '/CN=localhost',
      '-addext',
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
      '-keyout',
      keyFile,
      '-out',
      certFile,
    ],
    { stdio: 'pipe' },
  );
  return {
    certFile,
    keyFile,
    cert: readFileSync(certFile),
    key: readFileSync(keyFile),
    remove: () => rmSync(dir, { recursive: true, force: true }),
  };
}

import { generateKeyPairSync } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { calculateJwkThumbprint, decodeProtectedHeader, exportJWK, importSPKI, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { clientAuthentication } from './oauth-client.js';

const server = { issuer: 'https://idp.example', token_endpoint: 'https://idp.example/token' };

/** What a token request would carry: its form body and headers, as the client authentication left them. */
async function authenticate(auth: Awaited<ReturnType<typeof clientAuthentication>>) {
  const body = new URLSearchParams({ grant_type: 'authorization_code' });
  const headers = new Headers();
  await Promise.resolve(auth(server, { client_id: 'app' }, body, headers));
  return { body, headers };
}

describe('the BFF client authentication', () => {
  it.each([
    ['RSA', 'RS256', () => generateKeyPairSync('rsa', { modulusLength: 2048 })],
    ['EC P-256', 'ES256', () => generateKeyPairSync('ec', { namedCurve: 'P-256' })],
  ] as const)(
    'signs a private_key_jwt assertion with a %s key file, named by its thumbprint',
    async (_kind, alg, generate) => {
      const { privateKey, publicKey } = generate();
      const file = join(mkdtempSync(join(tmpdir(), 'bff-key-')), 'key.pem');
      writeFileSync(file, privateKey.export({ type: 'pkcs8', format: 'pem' }));
      const { body, headers } = await authenticate(
        await clientAuthentication({ method: 'private_key_jwt', keyFile: file }),
      );
      expect(headers.get('authorization')).toBeNull();
      expect(body.get('client_assertion_type')).toBe(
        'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
      );
      const assertion = body.get('client_assertion') ?? '';
      const key = await importSPKI(publicKey.export({ type: 'spki', format: 'pem' }).toString(), alg);
      const { payload, protectedHeader } = await jwtVerify(assertion, key, { issuer: 'app', subject: 'app' });
      expect(protectedHeader.alg).toBe(alg);
      expect([payload.aud].flat()).toContain(server.issuer);
      expect(payload.jti).toBeTruthy();
      expect(decodeProtectedHeader(assertion).kid).toBe(await calculateJwkThumbprint(await exportJWK(key)));
    },
  );

  it('sends a client secret in the Authorization header (basic) or the body (post)', async () => {
    const basic = await authenticate(
      await clientAuthentication({ method: 'client_secret_basic', secret: 's3cret' }),
    );
    expect(basic.headers.get('authorization')).toBe(`Basic ${Buffer.from('app:s3cret').toString('base64')}`);
    expect(basic.body.get('client_secret')).toBeNull();
    const post = await authenticate(
      await clientAuthentication({ method: 'client_secret_post', secret: 's3cret' }),
    );
    expect(post.body.get('client_secret')).toBe('s3cret');
    expect(post.headers.get('authorization')).toBeNull();
  });
});

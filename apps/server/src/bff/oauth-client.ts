import { readFile } from 'node:fs/promises';
import { calculateJwkThumbprint, exportJWK, importPKCS8 } from 'jose';
import * as client from 'openid-client';
import type { ServerConfig } from '../config.js';

/**
 * The server as a confidential OAuth client of the provider (openid-client, docs/decisions/0119): its
 * discovery, read once and kept (a failure is tried again at the next use), and how it authenticates at
 * the token endpoint.
 */
export interface OAuthClient {
  /** The provider's configuration for this client; rejects while discovery fails. */
  configuration(): Promise<client.Configuration>;
}

type ClientAuthSetting = NonNullable<ServerConfig['bff']>['clientAuth'];

/** A PKCS #8 PEM key file: RS256 for RSA, ES256 for EC P-256, with its JWK thumbprint as `kid`. */
async function privateKeyJwt(file: string): Promise<client.ClientAuth> {
  const pem = await readFile(file, 'utf8');
  let key: Awaited<ReturnType<typeof importPKCS8>>;
  try {
    key = await importPKCS8(pem, 'RS256', { extractable: true });
  } catch {
    key = await importPKCS8(pem, 'ES256', { extractable: true });
  }
  const { d: _private, ...publicJwk } = await exportJWK(key);
  const { p: _p, q: _q, dp: _dp, dq: _dq, qi: _qi, ...jwk } = publicJwk;
  return client.PrivateKeyJwt({ key, kid: await calculateJwkThumbprint(jwk) });
}

export async function clientAuthentication(setting: ClientAuthSetting): Promise<client.ClientAuth> {
  switch (setting.method) {
    case 'private_key_jwt':
      return privateKeyJwt(setting.keyFile);
    case 'client_secret_post':
      return client.ClientSecretPost(setting.secret);
    default:
      return client.ClientSecretBasic(setting.secret);
  }
}

export function createOAuthClient(options: {
  authority: string;
  clientId: string;
  clientAuth: ClientAuthSetting;
  fetchImpl?: typeof fetch | undefined;
  /** Each request to the provider gives up after this long. */
  timeoutMs?: number;
}): OAuthClient {
  let loading: Promise<client.Configuration> | undefined;
  const load = async () => {
    const authority = new URL(options.authority);
    return client.discovery(
      authority,
      options.clientId,
      undefined,
      await clientAuthentication(options.clientAuth),
      {
        // Plain http only where the configuration allows it (loopback, development): config.ts refuses
        // it in production.
        ...(authority.protocol === 'http:' ? { execute: [client.allowInsecureRequests] } : {}),
        ...(options.fetchImpl ? { [client.customFetch]: options.fetchImpl as client.CustomFetch } : {}),
        timeout: (options.timeoutMs ?? 10_000) / 1000,
      },
    );
  };
  return {
    configuration() {
      loading ??= load().catch((error: unknown) => {
        loading = undefined;
        throw error;
      });
      return loading;
    },
  };
}

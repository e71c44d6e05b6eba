import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type CryptoKey } from 'jose';

/** A test's own answer for one path: a status and a JSON body. */
export type LoopbackHandler = (
  request: IncomingMessage,
  body: string,
) => { status: number; json: unknown } | Promise<{ status: number; json: unknown }>;

/** The endpoints a test may add, announced in discovery when present. */
const ENDPOINTS = { '/userinfo': 'userinfo_endpoint', '/introspect': 'introspection_endpoint' } as const;

/**
 * An OpenID provider stand-in on loopback for server tests: discovery and a JWKS with one RS256 key
 * (kid `k1`), whose private key the test signs tokens with, plus any `handlers` the test brings
 * (`/userinfo`, `/introspect` are named in discovery).
 */
export async function startLoopbackProvider(
  handlers: Partial<Record<keyof typeof ENDPOINTS, LoopbackHandler>> = {},
  options: {
    /** More members of the discovery document. */
    discovery?: Record<string, unknown>;
    /** The key's `alg` in the JWKS; null: none (the key then serves any RSA algorithm). Default RS256. */
    keyAlg?: string | null;
  } = {},
): Promise<{
  issuer: string;
  key: CryptoKey;
  close: () => Promise<void>;
}> {
  // Extractable, so a test can sign with the same key under another algorithm.
  const pair = await generateKeyPair('RS256', { extractable: true });
  const publicJwk = await exportJWK(pair.publicKey);
  let issuer = '';
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += String(chunk)));
    req.on('end', () => {
      void (async () => {
        res.setHeader('content-type', 'application/json');
        const handler = handlers[req.url as keyof typeof ENDPOINTS];
        if (req.url === '/.well-known/openid-configuration') {
          const endpoints = Object.entries(ENDPOINTS)
            .filter(([path]) => path in handlers)
            .map(([path, name]) => [name, `${issuer}${path}`]);
          res.end(
            JSON.stringify({
              issuer,
              jwks_uri: `${issuer}/jwks`,
              ...Object.fromEntries(endpoints),
              ...options.discovery,
            }),
          );
        } else if (req.url === '/jwks') {
          const alg = options.keyAlg === undefined ? 'RS256' : options.keyAlg;
          res.end(
            JSON.stringify({ keys: [{ ...publicJwk, kid: 'k1', use: 'sig', ...(alg ? { alg } : {}) }] }),
          );
        } else if (handler) {
          const answer = await handler(req, body);
          res.statusCode = answer.status;
          res.end(JSON.stringify(answer.json));
        } else {
          res.statusCode = 404;
          res.end('{}');
        }
      })();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  issuer = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    issuer,
    key: pair.privateKey,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

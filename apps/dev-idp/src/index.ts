import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

import type Koa from 'koa';

import { DEMO_ACCOUNTS } from './accounts.js';
import { generateSigningKey } from './keys.js';
import { ROUTES, createProvider } from './provider.js';
import { IssuedTokens } from './issued-tokens.js';
import { TEST_CONTROL_PATH, TEST_CONTROL_SECRET_HEADER, TestControls } from './test-controls.js';

export { DEMO_ACCOUNTS } from './accounts.js';
export type { DemoAccount } from './accounts.js';
export {
  MISBEHAVIOUR_MODES,
  TEST_CONTROL_PATH,
  TEST_CONTROL_SCOPE_AGENT,
  TEST_CONTROL_SECRET_HEADER,
} from './test-controls.js';
export type { MisbehaviourMode, MisbehaviourSettings } from './test-controls.js';

export interface DevIdpOptions {
  /** 0 picks a free port. */
  port: number;
  /** Interface to listen on; default 'localhost'. */
  host?: string;
  /** Default `http://localhost:${actualPort}`. */
  issuer?: string;
  /** Origin of the Gatehouse app, e.g. 'http://localhost:3000'; the client's redirect and CORS origin. */
  appOrigin: string;
  /** Default 'gatehouse'. */
  clientId?: string;
  /** Resource indicator and audience of the API access tokens; default `${appOrigin}/api`. */
  apiResource?: string;
  /** Lifetime of access tokens and ID tokens; default 300. */
  accessTokenTtlSeconds?: number | undefined;
  /** `opaque`: access tokens are opaque (userinfo, introspection), not JWTs for the API; default `jwt`. */
  accessTokenFormat?: 'jwt' | 'opaque';
  /**
   * The app is a confidential client with this secret (client_secret_basic), as Gatehouse's server is in
   * BFF mode: its redirect URI is `/bff/callback` and it is told of sign-outs by back-channel logout.
   * Default: a public client (PKCE), the SPA's token vault.
   */
  clientSecret?: string | undefined;
  /** Registers this confidential client, allowed to introspect the app's tokens (RFC 7662). */
  introspectionClient?: { client_id: string; client_secret: string };
  /** Offer DPoP-bound tokens (RFC 9449); `false` plays a provider without DPoP. Default true. */
  dpop?: boolean;
  /** Where tokens carry the roles: `roles` (default), or a dotted path such as Keycloak's `realm_access.roles`. */
  rolesClaim?: string;
  /** Mounts POST/GET /__test/misbehave (with the secret below in a header); default false. */
  testControls?: boolean;
  /**
   * The secret the test controls require in `X-Test-Controls-Secret` (at least 16 characters); default
   * a random one for this start, printed with the start-up lines.
   */
  testControlsSecret?: string;
  /** Receives start-up lines and server errors; default console.info. */
  log?: (line: string) => void;
}

export interface DevIdp {
  issuer: string;
  port: number;
  /** The secret of the test controls, when they are on. */
  testControlsSecret: string | undefined;
  close(): Promise<void>;
}

function describe(options: {
  issuer: string;
  clientId: string;
  redirectUri: string;
  confidential: boolean;
  testControls: { secret: string; generated: boolean } | undefined;
  opaque: boolean;
  dpop: boolean;
  rolesClaim: string;
}): string[] {
  return [
    '*** Gatehouse dev-idp: a LOCAL OpenID Provider for DEVELOPMENT AND TESTS ONLY. ***',
    '*** Public demo passwords, in-memory state, keys regenerated on every start. Never deploy or expose it. ***',
    `Issuer:        ${options.issuer}`,
    `Discovery:     ${options.issuer}/.well-known/openid-configuration`,
    `Client:        ${options.clientId} (${options.confidential ? 'confidential, client_secret_basic' : 'public'}, PKCE S256) -> ${options.redirectUri}`,
    `Demo accounts: ${DEMO_ACCOUNTS.map((a) => `${a.username} / ${a.password} (${a.label})`).join(', ')}`,
    ...(options.opaque ? ['Access tokens: opaque (check them through userinfo or introspection)'] : []),
    ...(options.dpop ? [] : ['DPoP:          off (bearer tokens only)']),
    ...(options.rolesClaim === 'roles' ? [] : [`Roles claim:   ${options.rolesClaim}`]),
    ...(options.testControls
      ? [
          `Test controls: ENABLED at ${options.issuer}${TEST_CONTROL_PATH}, with the header ${TEST_CONTROL_SECRET_HEADER}: ` +
            (options.testControls.generated ? options.testControls.secret : '(the secret given at start)'),
        ]
      : []),
  ];
}

export async function startDevIdp(options: DevIdpOptions): Promise<DevIdp> {
  const log = options.log ?? ((line: string) => console.info(line));
  const appOrigin = new URL(options.appOrigin).origin;
  const clientId = options.clientId ?? 'gatehouse';
  const apiResource = options.apiResource ?? `${appOrigin}/api`;
  const defaultTtl = options.accessTokenTtlSeconds ?? 300;
  if (!Number.isSafeInteger(defaultTtl) || defaultTtl < 1) {
    throw new RangeError(`accessTokenTtlSeconds must be a positive whole number, got ${defaultTtl}`);
  }
  if (options.testControlsSecret !== undefined && options.testControlsSecret.length < 16) {
    throw new RangeError('testControlsSecret must be at least 16 characters long');
  }
  const testControls = options.testControls
    ? {
        secret: options.testControlsSecret ?? randomBytes(24).toString('base64url'),
        generated: options.testControlsSecret === undefined,
      }
    : undefined;

  // Listen first: the default issuer needs the port that port 0 resolves to. Requests that arrive
  // while the provider is still being built wait for it rather than hang unanswered.
  type Handler = ReturnType<Koa['callback']>;
  let ready: (handler: Handler) => void = () => {};
  const handler = new Promise<Handler>((resolve) => (ready = resolve));
  const server = createServer((req, res) => void handler.then((handle) => handle(req, res)));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host ?? 'localhost', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const issuer = options.issuer ?? `http://localhost:${port}`;

  const close = () =>
    new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      // All of them, not only the idle ones: a browser's preconnected socket, which has sent no request
      // yet, would otherwise hold the stop until its headers time out (a minute).
      server.closeAllConnections();
    });

  try {
    const signingKey = await generateSigningKey();
    const redirectUri = `${appOrigin}${options.clientSecret === undefined ? '/callback' : '/bff/callback'}`;
    const controls = testControls
      ? new TestControls({
          secret: testControls.secret,
          signingKey,
          defaultAccessTokenTtlSeconds: defaultTtl,
          issuer: () => issuer,
          appOrigin,
          clientId,
          redirectUri,
          routes: ROUTES,
        })
      : undefined;

    const provider = createProvider({
      issuer,
      appOrigin,
      clientId,
      clientSecret: options.clientSecret,
      redirectUri,
      apiResource,
      signingKey,
      tokenTtlSeconds: () => controls?.accessTokenTtlSeconds() ?? defaultTtl,
      accessTokenFormat: options.accessTokenFormat ?? 'jwt',
      introspectionClient: options.introspectionClient,
      dpop: options.dpop ?? true,
      ...(options.rolesClaim ? { rolesClaim: options.rolesClaim } : {}),
      ahead: controls ? [controls.middleware()] : [],
    });
    if (testControls) {
      const sessionUidOf = async (cookie: string) => (await provider.Session.find(cookie))?.uid;
      provider.use(new IssuedTokens(testControls.secret, ROUTES, sessionUidOf).middleware());
    }

    // Our listeners replace Koa's default error printing (console.error); tests fail on console.error.
    const app: Koa = provider;
    app.on('error', (error: unknown) => log(`dev-idp error: ${String(error)}`));
    provider.on('server_error', (_ctx, error) => log(`dev-idp server_error: ${String(error)}`));
    provider.on('backchannel.error', (_ctx, error, client: { clientId: string }) =>
      log(`dev-idp back-channel logout to ${client.clientId} failed: ${String(error)}`),
    );

    ready(provider.callback());
    for (const line of describe({
      issuer,
      clientId,
      redirectUri,
      confidential: options.clientSecret !== undefined,
      testControls,
      opaque: options.accessTokenFormat === 'opaque',
      dpop: options.dpop ?? true,
      rolesClaim: options.rolesClaim ?? 'roles',
    }))
      log(line);
  } catch (error) {
    await close();
    throw error;
  }

  return { issuer, port, close, testControlsSecret: testControls?.secret };
}

import { randomBytes } from 'node:crypto';
import {
  ConfigError,
  environment,
  LOCAL_INSTRUMENTATION_KEY,
  parseConnectionString,
  readEnvironment,
} from '@gatehouse/config';
import type * as z from 'zod';

export { ConfigError, parseConnectionString };

const IPV4_LOOPBACK = /^127(\.\d{1,3}){3}$/;

/** A host that only this machine reaches: the bundled provider and plain http are safe there. */
export function isLoopbackHost(hostname: string): boolean {
  return (
    hostname === 'localhost' ||
    hostname.endsWith('.localhost') ||
    hostname === '[::1]' ||
    IPV4_LOOPBACK.test(hostname)
  );
}

/**
 * The loopback address to listen on for `hostname` (the public origin's): itself when it is an address
 * (127.0.0.1, [::1]), else `localhost`, which every machine resolves (a name under .localhost may not be).
 */
function loopbackListenHost(hostname: string): string {
  if (hostname === '[::1]') return '::1';
  return IPV4_LOOPBACK.test(hostname) ? hostname : 'localhost';
}

/** Whether `url` uses the `secure` scheme, or any scheme but to this machine only. */
export function secureOrLoopback(url: string, secure: 'https' | 'rediss'): boolean {
  const { protocol, hostname } = new URL(url);
  return protocol === `${secure}:` || isLoopbackHost(hostname);
}

/** The URLs that must be encrypted in production unless they stay on this machine, and why. */
const PRODUCTION_TRANSPORTS = [
  [
    'OIDC_AUTHORITY',
    'https',
    'http',
    "plain http lets anyone on the way replace the provider's keys and so sign in as anyone",
  ],
  [
    'COLLECTOR_URL',
    'https',
    'http',
    'the collector token and every telemetry item travel to the store holder',
  ],
  [
    'REDIS_URL',
    'rediss',
    'redis',
    "Redis's password and the replay table travel there: whoever changes them can replay DPoP proofs",
  ],
] as const;

type Environment = z.output<typeof environment>;

/** BFF mode: the server is a confidential client, and its session cookie needs a secure origin. */
function bffRules(env: Environment, ctx: z.RefinementCtx): void {
  const auth =
    env.OIDC_CLIENT_AUTH ?? (env.OIDC_CLIENT_PRIVATE_KEY_FILE ? 'private_key_jwt' : 'client_secret_basic');
  if (env.OIDC_AUTHORITY) {
    if (auth === 'private_key_jwt' && !env.OIDC_CLIENT_PRIVATE_KEY_FILE) {
      ctx.addIssue({
        code: 'custom',
        path: ['OIDC_CLIENT_PRIVATE_KEY_FILE'],
        message: 'is required with OIDC_CLIENT_AUTH=private_key_jwt (a PKCS #8 PEM file: RSA or EC P-256)',
      });
    }
    if (auth !== 'private_key_jwt' && !env.OIDC_CLIENT_SECRET) {
      ctx.addIssue({
        code: 'custom',
        path: ['OIDC_CLIENT_SECRET'],
        message:
          'is required with OIDC_MODE=bff: the server is a confidential client (or set ' +
          'OIDC_CLIENT_PRIVATE_KEY_FILE for private_key_jwt)',
      });
    }
  }
  if (!env.OIDC_AUTHORITY && auth !== 'client_secret_basic') {
    ctx.addIssue({
      code: 'custom',
      path: ['OIDC_CLIENT_AUTH'],
      message:
        'must be client_secret_basic (or unset) with the bundled provider, the one method it registers',
    });
  }
  const origin = env.PUBLIC_ORIGIN ? new URL(env.PUBLIC_ORIGIN) : undefined;
  if (origin && origin.protocol !== 'https:' && !isLoopbackHost(origin.hostname)) {
    ctx.addIssue({
      code: 'custom',
      path: ['PUBLIC_ORIGIN'],
      message:
        'must use https with OIDC_MODE=bff: the session cookie is a __Host- cookie, which browsers keep ' +
        'only from a secure origin (loopback excepted)',
    });
  }
  if (env.API_DPOP === 'required') {
    ctx.addIssue({
      code: 'custom',
      path: ['API_DPOP'],
      message:
        'cannot be "required" with OIDC_MODE=bff: the server calls the API for the browser with bearer tokens ' +
        'it keeps, which the browser never sees',
    });
  }
}

/** The shared environment (packages/config), with the rules that tie the server's settings together. */
const envSchema = environment.superRefine((env, ctx) => {
  if (env.OIDC_AUTHORITY && !env.OIDC_CLIENT_ID) {
    ctx.addIssue({
      code: 'custom',
      path: ['OIDC_CLIENT_ID'],
      message: 'is required when OIDC_AUTHORITY is set',
    });
  }
  if (env.OIDC_MODE === 'bff') {
    bffRules(env, ctx);
  } else {
    for (const key of ['OIDC_CLIENT_SECRET', 'OIDC_CLIENT_AUTH', 'OIDC_CLIENT_PRIVATE_KEY_FILE'] as const) {
      if (env[key] !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message:
            'is read only with OIDC_MODE=bff: in browser mode the OAuth client is public and holds no secret ' +
            "(a secret in the browser would be every visitor's)",
        });
      }
    }
  }
  if (Boolean(env.OIDC_INTROSPECTION_CLIENT_ID) !== Boolean(env.OIDC_INTROSPECTION_CLIENT_SECRET)) {
    ctx.addIssue({
      code: 'custom',
      path: [
        env.OIDC_INTROSPECTION_CLIENT_ID
          ? 'OIDC_INTROSPECTION_CLIENT_SECRET'
          : 'OIDC_INTROSPECTION_CLIENT_ID',
      ],
      message: 'OIDC_INTROSPECTION_CLIENT_ID and OIDC_INTROSPECTION_CLIENT_SECRET go together',
    });
  }
  const production = env.NODE_ENV === 'production';
  const publicOrigin =
    env.PUBLIC_ORIGIN !== undefined && !isLoopbackHost(new URL(env.PUBLIC_ORIGIN).hostname);
  if (!env.OIDC_AUTHORITY && (production || publicOrigin) && !env.ALLOW_BUNDLED_DEV_IDP) {
    ctx.addIssue({
      code: 'custom',
      path: ['OIDC_AUTHORITY'],
      message:
        `is required ${production ? 'when NODE_ENV=production' : `for the public origin ${env.PUBLIC_ORIGIN}`}: ` +
        'without it Gatehouse would start its bundled development provider, whose demo accounts (admin/admin) ' +
        'anyone can use and whose address is localhost. Set OIDC_AUTHORITY to your provider, or ' +
        'ALLOW_BUNDLED_DEV_IDP=1 to start the bundled provider anyway (demonstrations and tests only).',
    });
  }
  if (production) {
    // Plain-text transports only to this machine: anyone on the way could read and change what travels.
    for (const [key, secure, plain, why] of PRODUCTION_TRANSPORTS) {
      const value = env[key];
      if (value !== undefined && !secureOrLoopback(value, secure)) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `must use ${secure} when NODE_ENV=production (${why}); only a loopback address may use ${plain}`,
        });
      }
    }
  }
  if ((env.TLS_CERT_FILE === undefined) !== (env.TLS_KEY_FILE === undefined)) {
    ctx.addIssue({
      code: 'custom',
      path: [env.TLS_CERT_FILE ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'],
      message: 'is required when the other of TLS_CERT_FILE and TLS_KEY_FILE is set',
    });
  }
  if (env.TELEMETRY_RELAY && !env.APPLICATIONINSIGHTS_CONNECTION_STRING) {
    ctx.addIssue({
      code: 'custom',
      path: ['TELEMETRY_RELAY'],
      message: 'needs APPLICATIONINSIGHTS_CONNECTION_STRING: the relay forwards to its ingestion endpoint',
    });
  }
  if (env.TELEMETRY_RELAY_LOCAL_COPY && !env.TELEMETRY_RELAY) {
    ctx.addIssue({
      code: 'custom',
      path: ['TELEMETRY_RELAY_LOCAL_COPY'],
      message: 'needs TELEMETRY_RELAY=true',
    });
  }
  const endpoint =
    env.TELEMETRY_RELAY && env.APPLICATIONINSIGHTS_CONNECTION_STRING
      ? parseConnectionString(env.APPLICATIONINSIGHTS_CONNECTION_STRING).ingestionendpoint
      : undefined;
  if (endpoint !== undefined && URL.canParse(endpoint) && !secureOrLoopback(endpoint, 'https')) {
    ctx.addIssue({
      code: 'custom',
      path: ['APPLICATIONINSIGHTS_CONNECTION_STRING'],
      message: 'IngestionEndpoint must use https for the relay; only a loopback address may use http',
    });
  }
  if (env.COLLECTOR_URL && !env.COLLECTOR_TOKEN) {
    ctx.addIssue({
      code: 'custom',
      path: ['COLLECTOR_TOKEN'],
      message: "is required when COLLECTOR_URL is set (the store holder's COLLECTOR_TOKEN)",
    });
  }
  // Several replicas must share the DPoP replay table and the rate limits (Redis), else a proof one
  // accepted is accepted again by each of the others. A replica cannot see its peers (a relay-only
  // cluster has no sign of them), so in production it asks to be told: Redis, or that it is alone.
  if (production && !env.REDIS_URL) {
    const several = env.COLLECTOR_TOKEN ? 'COLLECTOR_TOKEN' : env.COLLECTOR_URL ? 'COLLECTOR_URL' : undefined;
    if (several || !env.GATEHOUSE_SINGLE_REPLICA) {
      ctx.addIssue({
        code: 'custom',
        path: ['REDIS_URL'],
        message:
          `is required when NODE_ENV=production${several ? ` with ${several} (several replicas)` : ''}: ` +
          'replicas share the DPoP replay table and the rate limits in Redis, and without it a DPoP proof one ' +
          'replica accepted can be replayed once at every other. ' +
          (several
            ? 'Set REDIS_URL on every replica.'
            : 'Set REDIS_URL, or GATEHOUSE_SINGLE_REPLICA=1 if this process is the only replica.'),
      });
    }
  }
  if (env.COLLECTOR_TOKEN && !env.TELEMETRY_USER_ID_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['TELEMETRY_USER_ID_SECRET'],
      message:
        'is required with COLLECTOR_TOKEN: every replica must issue and verify the same pseudonymous ' +
        'user ids, and the key each would otherwise keep in its own data folder would differ',
    });
  }
  if (env.COLLECTOR_TOKEN && env.API_DPOP_NONCES && !env.API_DPOP_NONCE_SECRET) {
    ctx.addIssue({
      code: 'custom',
      path: ['API_DPOP_NONCE_SECRET'],
      message:
        'is required with COLLECTOR_TOKEN and API_DPOP_NONCES: a nonce one replica issued must hold at the next',
    });
  }
  if (!env.OIDC_AUTHORITY && env.IDP_PORT === env.PORT) {
    ctx.addIssue({ code: 'custom', path: ['IDP_PORT'], message: 'must differ from PORT' });
  }
});

/**
 * The server's settings, made from the environment by loadConfig (its return type: each setting is
 * described where it is made, once).
 */
export type ServerConfig = ReturnType<typeof loadConfig>;

/**
 * Validates the environment at once and names every missing or invalid key in one message. `dev`: the
 * development server (`--dev`, which `npm run dev` starts), refused with NODE_ENV=production before
 * anything else is checked, so that the production rules' list does not hide it.
 */
export function loadConfig(env: Record<string, string | undefined>, { dev = false }: { dev?: boolean } = {}) {
  if (dev && env.NODE_ENV?.trim() === 'production') {
    throw new ConfigError(
      'Gatehouse cannot start: --dev (npm run dev) is the development server, which serves files of the ' +
        'repository, and NODE_ENV is production. Build and run the app with `npm start`, or unset NODE_ENV to develop.',
    );
  }
  const e = readEnvironment(envSchema, env, 'Gatehouse');
  const tls =
    e.TLS_CERT_FILE && e.TLS_KEY_FILE ? { certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE } : undefined;
  const publicUrl = new URL(e.PUBLIC_ORIGIN ?? `${tls ? 'https' : 'http'}://localhost:${e.PORT}`);
  const publicOrigin = publicUrl.origin;
  const local = e.OIDC_AUTHORITY === undefined;
  const clientId = e.OIDC_CLIENT_ID ?? 'gatehouse';
  const relayKey =
    e.TELEMETRY_RELAY && e.APPLICATIONINSIGHTS_CONNECTION_STRING
      ? parseConnectionString(e.APPLICATIONINSIGHTS_CONNECTION_STRING).instrumentationkey
      : undefined;
  return {
    port: e.PORT,
    /**
     * The address the server listens on: undefined, every interface; in development (`--dev`) loopback
     * only, since Vite's dev server reads files of the repository (docs/decisions/0096).
     */
    listenHost: dev ? loopbackListenHost(publicUrl.hostname) : undefined,
    publicOrigin,
    /**
     * Proxies in front of the server whose `X-Forwarded-For` / `X-Forwarded-Proto` are believed: their
     * addresses and ranges (TRUST_PROXY as a list: believed only from them), or a count of hops from the
     * server (TRUST_PROXY_HOPS when TRUST_PROXY=1: believed from whoever connects); 0: none, the
     * connection is the client.
     */
    trustProxy: e.TRUST_PROXY === true ? e.TRUST_PROXY_HOPS : e.TRUST_PROXY || 0,
    /** How the API treats sender-constrained tokens (RFC 9449 DPoP). */
    dpop: { mode: e.API_DPOP, nonces: e.API_DPOP_NONCES, nonceSecret: e.API_DPOP_NONCE_SECRET },
    /**
     * PEM files for serving https on `port` itself (the Node.js SDK 3.x and the Azure Monitor exporter
     * post only to https); undefined serves plain http, e.g. behind a TLS-terminating proxy.
     */
    tls,
    oidc: {
      /** Undefined: no provider is configured, so the local development provider is started. */
      authority: e.OIDC_AUTHORITY,
      /** Who is the OAuth client: the browser's token vault, or this server (a BFF). */
      mode: e.OIDC_MODE,
      clientId,
      scope: e.OIDC_SCOPE,
      rolesClaim: e.OIDC_ROLES_CLAIM,
      /** The audience the API accepts in access tokens. */
      audience: e.OIDC_AUDIENCE ?? (local ? `${publicOrigin}/api` : clientId),
      extraQueryParams: Object.fromEntries(new URLSearchParams(e.OIDC_EXTRA_AUTH_PARAMS ?? '')),
      /** RFC 7662 client credentials: opaque access tokens are introspected with them, else userinfo is asked. */
      introspectionClient:
        e.OIDC_INTROSPECTION_CLIENT_ID && e.OIDC_INTROSPECTION_CLIENT_SECRET
          ? { client_id: e.OIDC_INTROSPECTION_CLIENT_ID, client_secret: e.OIDC_INTROSPECTION_CLIENT_SECRET }
          : undefined,
    },
    /** BFF mode (OIDC_MODE=bff): the server's client credentials and its sessions; undefined in browser mode. */
    bff:
      e.OIDC_MODE === 'bff'
        ? {
            /**
             * The server's client authentication; with the bundled provider and no secret given, a random
             * secret of this start, which the server hands the provider it starts.
             */
            clientAuth:
              (e.OIDC_CLIENT_AUTH ??
                (e.OIDC_CLIENT_PRIVATE_KEY_FILE ? 'private_key_jwt' : 'client_secret_basic')) ===
              'private_key_jwt'
                ? { method: 'private_key_jwt' as const, keyFile: e.OIDC_CLIENT_PRIVATE_KEY_FILE ?? '' }
                : {
                    method: (e.OIDC_CLIENT_AUTH ?? 'client_secret_basic') as
                      'client_secret_basic' | 'client_secret_post',
                    secret: e.OIDC_CLIENT_SECRET ?? randomBytes(32).toString('base64url'),
                  },
            idleMs: e.BFF_SESSION_IDLE_MINUTES * 60_000,
            maxMs: e.BFF_SESSION_MAX_HOURS * 3_600_000,
          }
        : undefined,
    devIdp: {
      port: e.IDP_PORT,
      testControls: e.DEV_IDP_TEST_CONTROLS,
      /** The secret the test controls require; undefined: the provider makes one per start. */
      testControlsSecret: e.DEV_IDP_TEST_CONTROLS_SECRET,
      accessTokenTtlSeconds: e.DEV_IDP_ACCESS_TOKEN_TTL,
      /** `opaque`: the bundled provider issues opaque access tokens (no resource indicator), as many do. */
      accessTokenFormat: e.DEV_IDP_ACCESS_TOKEN_FORMAT,
      /** Whether the bundled provider offers DPoP (it then binds the tokens of clients that send proofs). */
      dpop: e.DEV_IDP_DPOP === 'on',
      /** Where the bundled provider puts the roles (`realm_access.roles`: as Keycloak does). */
      rolesClaim: e.DEV_IDP_ROLES_CLAIM,
    },
    telemetry: {
      /**
       * What the browser is given: the configured connection string; with the relay, its key and this
       * origin as the endpoint; else the built-in collector's.
       */
      connectionString:
        relayKey !== undefined
          ? `InstrumentationKey=${relayKey};IngestionEndpoint=${publicOrigin}/`
          : (e.APPLICATIONINSIGHTS_CONNECTION_STRING ??
            `InstrumentationKey=${LOCAL_INSTRUMENTATION_KEY};IngestionEndpoint=${publicOrigin}/`),
      /** Whether the browser sends telemetry elsewhere than this server (a connection string, no relay). */
      external: e.APPLICATIONINSIGHTS_CONNECTION_STRING !== undefined && relayKey === undefined,
      /** The relay to Azure Monitor (TELEMETRY_RELAY); undefined: none. */
      relay:
        relayKey !== undefined && e.APPLICATIONINSIGHTS_CONNECTION_STRING
          ? {
              /** The configured connection string: the destination and its key come from it only. */
              connectionString: e.APPLICATIONINSIGHTS_CONNECTION_STRING,
              maxBytes: e.TELEMETRY_RELAY_MAX_MB * 1024 * 1024,
              maxRetryMs: e.TELEMETRY_RELAY_MAX_RETRY_SECONDS * 1000,
              /** Also keep every item in the local store, for the built-in dashboard. */
              localCopy: e.TELEMETRY_RELAY_LOCAL_COPY,
            }
          : undefined,
      /** The dashboard over a Log Analytics workspace; undefined: over the local store. */
      logAnalytics: e.LOG_ANALYTICS_WORKSPACE_ID
        ? {
            workspaceId: e.LOG_ANALYTICS_WORKSPACE_ID,
            endpoint: e.LOG_ANALYTICS_ENDPOINT,
            resourceId: e.APPLICATIONINSIGHTS_RESOURCE_ID,
          }
        : undefined,
      consent: e.TELEMETRY_CONSENT,
      /**
       * Keys of the pseudonymous user id (docs/decisions/0017): the first issues ids, all verify them.
       * Undefined: a key kept in the data directory, made on first start.
       */
      userIdSecrets: e.TELEMETRY_USER_ID_SECRET,
    },
    /** The least severe log lines written (pino's levels; `silent` writes none). */
    logLevel: e.LOG_LEVEL,
    /** How a SIGTERM or SIGINT drains the process (docs/replicas.md). */
    shutdown: {
      /** Readiness fails this long before the listener closes, so balancers stop sending first. */
      delayMs: e.SHUTDOWN_DELAY_SECONDS * 1000,
      /** What requests in flight get to finish before their connections are cut. */
      timeoutMs: e.SHUTDOWN_TIMEOUT_SECONDS * 1000,
    },
    /** Limits of the HTTP server (the collector's first line against slow and flooding clients). */
    http: {
      requestTimeoutMs: e.HTTP_REQUEST_TIMEOUT_SECONDS * 1000,
      headersTimeoutMs: Math.min(e.HTTP_HEADERS_TIMEOUT_SECONDS, e.HTTP_REQUEST_TIMEOUT_SECONDS) * 1000,
      maxConnections: e.HTTP_MAX_CONNECTIONS,
    },
    collector: {
      dataDir: e.GATEHOUSE_DATA_DIR,
      retentionDays: e.TELEMETRY_RETENTION_DAYS,
      /** Items a second across all senders; undefined: no limit. */
      maxItemsPerSecond: e.TELEMETRY_MAX_ITEMS_PER_SECOND || undefined,
      /** Items a second per client address (behind TRUST_PROXY, the proxy's X-Forwarded-For); undefined: no limit. */
      maxItemsPerSecondPerSource: e.TELEMETRY_MAX_ITEMS_PER_SECOND_PER_SOURCE || undefined,
      maxItemsPerRequest: e.TELEMETRY_MAX_ITEMS_PER_REQUEST,
      /** Stored bytes a second per source; undefined: no limit. */
      maxBytesPerSecondPerSource: e.TELEMETRY_MAX_KB_PER_SECOND_PER_SOURCE * 1024 || undefined,
      /** What a source's byte bucket holds when full. */
      maxBytesBurstPerSource: e.TELEMETRY_MAX_KB_BURST_PER_SOURCE * 1024,
      /** Request body bytes held at once, counted as they arrive and inflate; 0: no cap. */
      maxBytesInFlight: e.TELEMETRY_MAX_MB_IN_FLIGHT * 1024 * 1024,
      /** The same for one source; undefined: a quarter of `maxBytesInFlight`; 0: no share. */
      maxBytesInFlightPerSource:
        e.TELEMETRY_MAX_MB_IN_FLIGHT_PER_SOURCE === undefined
          ? undefined
          : e.TELEMETRY_MAX_MB_IN_FLIGHT_PER_SOURCE * 1024 * 1024,
      /** The least rate a body arrives at after `minBodyRateGraceMs` (else 408); 0: none. */
      minBodyBytesPerSecond: e.TELEMETRY_MIN_BODY_BYTES_PER_SECOND,
      minBodyRateGraceMs: e.TELEMETRY_MIN_BODY_RATE_GRACE_SECONDS * 1000,
      /** Bytes the data folder may hold; 0: no quota. */
      maxStoreBytes: e.TELEMETRY_MAX_STORE_MB * 1024 * 1024,
      /** MiB the embedded database may use for its buffers; undefined: DuckDB's own default. */
      storeMemoryMb: e.TELEMETRY_STORE_MEMORY_MB,
      // With the relay, the browser sends with the Azure resource's key (the relay writes it anyway).
      /** The instrumentation keys the collector accepts. */
      instrumentationKeys: [relayKey ?? LOCAL_INSTRUMENTATION_KEY],
      /**
       * The store holder's base URL: this replica opens no store and forwards to it (docs/decisions/0041).
       * Undefined: this process holds the store.
       */
      forwardTo: e.COLLECTOR_URL,
      /** The secret between replicas and the store holder; set on both sides, or on neither. */
      token: e.COLLECTOR_TOKEN,
      /**
       * How long a forwarding replica holds a batch while the store holder refuses connections (its
       * restart), before answering 503: longer than its restart, browsers see no failure.
       */
      waitForStoreHolderMs: e.COLLECTOR_WAIT_SECONDS * 1000,
    },
    /**
     * Redis, where replicas keep what they must agree on (the DPoP replay table, the rate-limit buckets);
     * undefined: both stay in this process (one replica). Holds a password: never logged.
     */
    redisUrl: e.REDIS_URL,
  };
}

import { isIP } from 'node:net';
import { z } from 'zod';
import { parseConnectionString } from './connection-string.js';

/**
 * The collector's defaults, in the units its environment variables take: the schema below defaults to
 * them, and the collector (a library that may run without this schema) falls back to the same values.
 */
export const COLLECTOR_DEFAULTS = {
  TELEMETRY_RETENTION_DAYS: 90,
  TELEMETRY_MAX_ITEMS_PER_REQUEST: 1000,
  TELEMETRY_MAX_STORE_MB: 5120,
  TELEMETRY_MAX_KB_BURST_PER_SOURCE: 1024,
  TELEMETRY_MAX_MB_IN_FLIGHT: 64,
  TELEMETRY_MIN_BODY_BYTES_PER_SECOND: 500,
  TELEMETRY_MIN_BODY_RATE_GRACE_SECONDS: 5,
  TELEMETRY_RELAY_MAX_MB: 1024,
  TELEMETRY_RELAY_MAX_RETRY_SECONDS: 300,
} as const;

/** pino's level names, least to most verbose, then `silent`. */
export const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
export type LogLevelName = (typeof LOG_LEVELS)[number];

const port = (fallback: number) =>
  z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a port number')
    .min(1, 'must be between 1 and 65535')
    .max(65_535, 'must be between 1 and 65535')
    .default(fallback);
/** On: `1` or `true`; off: `0` or `false` (or unset). */
const flag = z
  .enum(['1', '0', 'true', 'false'], { error: 'must be 1 or true (on), 0 or false (off)' })
  .default('0')
  .transform((value) => value === '1' || value === 'true');
/** The names Express's `trust proxy` (proxy-addr) knows besides addresses and ranges. */
const PROXY_NAMES = new Set(['loopback', 'linklocal', 'uniquelocal']);
/** An address, a CIDR range (`10.0.0.0/8`, `fd00::/8`) or one of `PROXY_NAMES`. */
function isProxyEntry(entry: string): boolean {
  if (PROXY_NAMES.has(entry)) return true;
  const [address = '', bits, ...rest] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || rest.length > 0) return false;
  if (bits === undefined) return true;
  const prefix = Number(bits);
  return /^\d+$/.test(bits) && prefix <= (family === 4 ? 32 : 128);
}
/**
 * Which proxies' X-Forwarded-For / -Proto are believed: off (`0`, `false`, unset); a count of hops
 * (`1`, `true`: TRUST_PROXY_HOPS of them, believed from whoever connects); or the proxies' addresses,
 * ranges and the names `loopback`, `linklocal`, `uniquelocal`, comma-separated (believed only from them).
 */
const trustProxy = z
  .string()
  .default('0')
  .transform((value, ctx): boolean | string[] => {
    const text = value.trim();
    if (text === '' || text === '0' || text === 'false') return false;
    if (text === '1' || text === 'true') return true;
    const entries = text.split(',').map((entry) => entry.trim());
    const wrong = entries.filter((entry) => !isProxyEntry(entry));
    if (wrong.length > 0) {
      ctx.addIssue({
        code: 'custom',
        message:
          `must be 1 or true (one proxy, from anywhere), 0 or false (none), or the proxies' addresses and ` +
          `CIDR ranges (or loopback, linklocal, uniquelocal), comma-separated; not: ${wrong.join(', ')}`,
      });
      return z.NEVER;
    }
    return entries;
  });
const optionalText = z
  .string()
  .trim()
  .transform((value) => value || undefined)
  .optional();

/** Azure Monitor connection string: `Key=Value;Key=Value`, with at least an InstrumentationKey. */
const connectionString = optionalText.superRefine((value, ctx) => {
  if (value === undefined) return;
  const fields = parseConnectionString(value);
  if (!fields.instrumentationkey) {
    ctx.addIssue({ code: 'custom', message: 'must contain InstrumentationKey=<guid>' });
  }
  const endpoint = fields.ingestionendpoint;
  if (endpoint !== undefined && !URL.canParse(endpoint)) {
    ctx.addIssue({ code: 'custom', message: 'IngestionEndpoint must be a URL' });
  }
});

function isHttpOrigin(value: string): boolean {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  return (url?.protocol === 'http:' || url?.protocol === 'https:') && url.origin === value.replace(/\/$/, '');
}

/**
 * Every environment variable any Gatehouse process reads, with its rule and its default, written once:
 * the server reads all of it, the bundled provider's command and the collector's commands `pick` the keys
 * they use, so a variable means the same everywhere. Nothing else reads process.env. The reference for
 * operators is docs/configuration.md.
 */
export const environment = z.object({
  NODE_ENV: optionalText,
  ALLOW_BUNDLED_DEV_IDP: flag,
  PORT: port(3000),
  IDP_PORT: port(3001),
  // Where the bundled provider redirects back to when it runs on its own (its CLI); the server passes its
  // own origin instead.
  APP_ORIGIN: z
    .string()
    .refine(isHttpOrigin, {
      error: 'must be an http(s) origin such as http://localhost:3000, without a path',
    })
    .transform((value) => new URL(value).origin)
    .default('http://localhost:3000'),
  PUBLIC_ORIGIN: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  OIDC_AUTHORITY: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  // Who is the OAuth client: the browser (the token vault, a public client) or this server (a BFF, a
  // confidential client; the browser holds a session cookie only). docs/configuration.md, "Which mode".
  OIDC_MODE: z.enum(['browser', 'bff']).default('browser'),
  OIDC_CLIENT_ID: optionalText,
  // BFF mode: how the server authenticates at the token endpoint (a secret, or a private key's JWT).
  OIDC_CLIENT_SECRET: optionalText,
  OIDC_CLIENT_AUTH: z.enum(['client_secret_basic', 'client_secret_post', 'private_key_jwt']).optional(),
  OIDC_CLIENT_PRIVATE_KEY_FILE: optionalText,
  // BFF mode: a session ends after this long without a request, and this long after sign-in whatever.
  BFF_SESSION_IDLE_MINUTES: z.coerce
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(60),
  BFF_SESSION_MAX_HOURS: z.coerce
    .number()
    .int()
    .min(1)
    .max(90 * 24)
    .default(24),
  OIDC_SCOPE: z
    .string()
    .trim()
    .default('openid profile email offline_access')
    .refine((scope) => scope.split(/\s+/).includes('openid'), 'must include "openid"'),
  OIDC_ROLES_CLAIM: z.string().trim().min(1).default('roles'),
  OIDC_AUDIENCE: optionalText,
  OIDC_INTROSPECTION_CLIENT_ID: optionalText,
  OIDC_INTROSPECTION_CLIENT_SECRET: optionalText,
  OIDC_EXTRA_AUTH_PARAMS: optionalText.refine(
    (value) => value === undefined || [...new URLSearchParams(value).keys()].length > 0,
    'must be a query string such as "audience=https://api.example.com"',
  ),
  APPLICATIONINSIGHTS_CONNECTION_STRING: connectionString,
  TELEMETRY_CONSENT: z.enum(['ask', 'implied']).default('ask'),
  // The relay to Azure Monitor and the dashboard over Log Analytics (docs/azure.md).
  TELEMETRY_RELAY: flag,
  TELEMETRY_RELAY_LOCAL_COPY: flag,
  TELEMETRY_RELAY_MAX_MB: z.coerce.number().int().min(1).default(COLLECTOR_DEFAULTS.TELEMETRY_RELAY_MAX_MB),
  TELEMETRY_RELAY_MAX_RETRY_SECONDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3600)
    .default(COLLECTOR_DEFAULTS.TELEMETRY_RELAY_MAX_RETRY_SECONDS),
  LOG_ANALYTICS_WORKSPACE_ID: optionalText.pipe(
    z
      .string()
      .regex(
        /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
        'must be a workspace id (a GUID)',
      )
      .optional(),
  ),
  LOG_ANALYTICS_ENDPOINT: optionalText.pipe(z.url({ protocol: /^https$/ }).optional()),
  APPLICATIONINSIGHTS_RESOURCE_ID: optionalText.pipe(
    z
      .string()
      .regex(
        /^\/subscriptions\/[^/]+\/resourceGroups\/[^/]+\/providers\/microsoft\.insights\/components\/[^/]+$/i,
        'must be the resource id of an Application Insights resource',
      )
      .optional(),
  ),
  // Relative to the working directory; the store, the relay's outbox and the user-id key live there.
  GATEHOUSE_DATA_DIR: z.string().trim().min(1).default('./data'),
  TELEMETRY_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .max(36_500)
    .default(COLLECTOR_DEFAULTS.TELEMETRY_RETENTION_DAYS),
  // Collector and HTTP limits (docs/configuration.md, "Limits for operators"); 0 turns a rate limit or the quota off.
  TELEMETRY_MAX_ITEMS_PER_SECOND: z.coerce.number().int().min(0).default(5000),
  TELEMETRY_MAX_ITEMS_PER_SECOND_PER_SOURCE: z.coerce.number().int().min(0).default(500),
  TELEMETRY_MAX_ITEMS_PER_REQUEST: z.coerce
    .number()
    .int()
    .min(1)
    .max(100_000)
    .default(COLLECTOR_DEFAULTS.TELEMETRY_MAX_ITEMS_PER_REQUEST),
  TELEMETRY_MAX_STORE_MB: z.coerce.number().int().min(0).default(COLLECTOR_DEFAULTS.TELEMETRY_MAX_STORE_MB),
  // 60 KiB/s with a 1 MiB burst: one source needs a day (and more) to fill the default quota.
  TELEMETRY_MAX_KB_PER_SECOND_PER_SOURCE: z.coerce.number().int().min(0).default(60),
  TELEMETRY_MAX_KB_BURST_PER_SOURCE: z.coerce
    .number()
    .int()
    .min(64)
    .default(COLLECTOR_DEFAULTS.TELEMETRY_MAX_KB_BURST_PER_SOURCE),
  TELEMETRY_MAX_MB_IN_FLIGHT: z.coerce
    .number()
    .int()
    .min(0)
    .default(COLLECTOR_DEFAULTS.TELEMETRY_MAX_MB_IN_FLIGHT),
  // One source's share of the above; unset: a quarter of it.
  TELEMETRY_MAX_MB_IN_FLIGHT_PER_SOURCE: z.coerce.number().int().min(0).optional(),
  // The embedded database's memory (DuckDB's memory_limit); unset: DuckDB's own, 80 % of the RAM it sees.
  // At 128 MiB a store of 10 M items failed to open (DuckDB: out of memory); 256 held it with no slower query.
  TELEMETRY_STORE_MEMORY_MB: z.coerce.number().int().min(256).optional(),
  // A body slower than this after the grace is answered 408 (Apache mod_reqtimeout's MinRate).
  TELEMETRY_MIN_BODY_BYTES_PER_SECOND: z.coerce
    .number()
    .int()
    .min(0)
    .default(COLLECTOR_DEFAULTS.TELEMETRY_MIN_BODY_BYTES_PER_SECOND),
  TELEMETRY_MIN_BODY_RATE_GRACE_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .max(3600)
    .default(COLLECTOR_DEFAULTS.TELEMETRY_MIN_BODY_RATE_GRACE_SECONDS),
  HTTP_REQUEST_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(30),
  HTTP_HEADERS_TIMEOUT_SECONDS: z.coerce.number().int().min(1).max(3600).default(10),
  HTTP_MAX_CONNECTIONS: z.coerce.number().int().min(1).default(1000),
  // SIGTERM: readiness fails at once, the listener stays open SHUTDOWN_DELAY_SECONDS (for the balancer
  // to see it), then in-flight requests get up to SHUTDOWN_TIMEOUT_SECONDS to finish.
  LOG_LEVEL: z.enum(LOG_LEVELS).default('info'),
  SHUTDOWN_DELAY_SECONDS: z.coerce.number().int().min(0).max(300).default(0),
  SHUTDOWN_TIMEOUT_SECONDS: z.coerce.number().int().min(0).max(3600).default(10),
  TELEMETRY_USER_ID_SECRET: optionalText.pipe(
    z
      .string()
      .transform((value) => value.split(',').map((secret) => secret.trim()))
      .refine(
        (secrets) => secrets.every((secret) => secret.length >= 32),
        'must be one secret of at least 32 characters, or several separated by commas (the first issues ids)',
      )
      .optional(),
  ),
  // Several replicas (docs/replicas.md): the one holding the store sets COLLECTOR_TOKEN; the others
  // set COLLECTOR_URL (the store holder's own address, not the balancer's) and the same token.
  COLLECTOR_URL: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
  COLLECTOR_TOKEN: optionalText.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  // Shared by every replica: the DPoP replay table and the rate-limit buckets (docs/decisions/0062).
  // How long a forwarding replica holds telemetry for a store holder that is restarting (then 503).
  COLLECTOR_WAIT_SECONDS: z.coerce.number().int().min(0).max(60).default(5),
  REDIS_URL: optionalText.pipe(z.url({ protocol: /^rediss?$/ }).optional()),
  // In production without REDIS_URL: the operator's word that this process is the only replica.
  GATEHOUSE_SINGLE_REPLICA: flag,
  TRUST_PROXY: trustProxy,
  // Proxies in front of the server, each adding one X-Forwarded-For entry (with TRUST_PROXY=1 only).
  TRUST_PROXY_HOPS: z.coerce.number().int().min(1).max(10).default(1),
  // RFC 9449: DPoP-bound tokens are always taken; `required` refuses bearer tokens.
  API_DPOP: z.enum(['allowed', 'required']).default('allowed'),
  API_DPOP_NONCES: flag,
  API_DPOP_NONCE_SECRET: optionalText.pipe(z.string().min(32, 'must be at least 32 characters').optional()),
  TLS_CERT_FILE: optionalText,
  TLS_KEY_FILE: optionalText,
  DEV_IDP_TEST_CONTROLS: flag,
  DEV_IDP_TEST_CONTROLS_SECRET: optionalText.pipe(
    z.string().min(16, 'must be at least 16 characters long').optional(),
  ),
  DEV_IDP_ACCESS_TOKEN_TTL: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(1, 'must be at least 1 second')
    .max(86_400, 'must be at most 86400 seconds (a day)')
    .optional(),
  DEV_IDP_ACCESS_TOKEN_FORMAT: z.enum(['jwt', 'opaque']).default('jwt'),
  DEV_IDP_DPOP: z.enum(['on', 'off']).default('on'),
  DEV_IDP_ROLES_CLAIM: z
    .string()
    .regex(/^[\w-]+(\.[\w-]+)*$/, 'must be a claim name or a dotted path such as realm_access.roles')
    .default('roles'),
});

export type Environment = z.output<typeof environment>;

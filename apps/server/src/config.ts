import { z } from 'zod';

const port = (fallback: number) => z.coerce.number().int().min(1).max(65_535).default(fallback);
const flag = z
  .enum(['1', '0', 'true', 'false', ''])
  .default('')
  .transform((value) => value === '1' || value === 'true');
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

/** Every environment variable the server reads, with its default. Nothing else reads process.env. */
const envSchema = z
  .object({
    PORT: port(3000),
    IDP_PORT: port(3001),
    PUBLIC_ORIGIN: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    OIDC_AUTHORITY: optionalText.pipe(z.url({ protocol: /^https?$/ }).optional()),
    OIDC_CLIENT_ID: optionalText,
    OIDC_SCOPE: z
      .string()
      .trim()
      .default('openid profile email offline_access')
      .refine((scope) => scope.split(/\s+/).includes('openid'), 'must include "openid"'),
    OIDC_ROLES_CLAIM: z.string().trim().min(1).default('roles'),
    OIDC_TOKEN_STORE: z.enum(['session', 'memory']).default('session'),
    OIDC_AUDIENCE: optionalText,
    OIDC_EXTRA_AUTH_PARAMS: optionalText.refine(
      (value) => value === undefined || [...new URLSearchParams(value).keys()].length > 0,
      'must be a query string such as "audience=https://api.example.com"',
    ),
    APPLICATIONINSIGHTS_CONNECTION_STRING: connectionString,
    TELEMETRY_CONSENT: z.enum(['ask', 'implied']).default('ask'),
    GATEHOUSE_DATA_DIR: z.string().trim().min(1).default('./data'),
    TELEMETRY_RETENTION_DAYS: z.coerce.number().int().min(0).max(36_500).default(90),
    TELEMETRY_MAX_ITEMS_PER_SECOND: z.coerce.number().int().min(1).optional(),
    TRUST_PROXY: flag,
    TLS_CERT_FILE: optionalText,
    TLS_KEY_FILE: optionalText,
    DEV_IDP_TEST_CONTROLS: flag,
    DEV_IDP_ACCESS_TOKEN_TTL: z.coerce.number().int().min(1).max(86_400).optional(),
  })
  .superRefine((env, ctx) => {
    if (env.OIDC_AUTHORITY && !env.OIDC_CLIENT_ID) {
      ctx.addIssue({
        code: 'custom',
        path: ['OIDC_CLIENT_ID'],
        message: 'is required when OIDC_AUTHORITY is set',
      });
    }
    if ((env.TLS_CERT_FILE === undefined) !== (env.TLS_KEY_FILE === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [env.TLS_CERT_FILE ? 'TLS_KEY_FILE' : 'TLS_CERT_FILE'],
        message: 'is required when the other of TLS_CERT_FILE and TLS_KEY_FILE is set',
      });
    }
    if (!env.OIDC_AUTHORITY && env.IDP_PORT === env.PORT) {
      ctx.addIssue({ code: 'custom', path: ['IDP_PORT'], message: 'must differ from PORT' });
    }
  });

export interface ServerConfig {
  port: number;
  /** The origin users reach the app at; the redirect URIs are derived from it. */
  publicOrigin: string;
  trustProxy: boolean;
  /**
   * PEM files for serving https on `port` itself (the Node.js SDK 3.x and the Azure Monitor exporter
   * post only to https); undefined serves plain http, e.g. behind a TLS-terminating proxy.
   */
  tls: { certFile: string; keyFile: string } | undefined;
  oidc: {
    /** Undefined: no provider is configured, so the local development provider is started. */
    authority: string | undefined;
    clientId: string;
    scope: string;
    rolesClaim: string;
    tokenStore: 'session' | 'memory';
    /** The audience the API accepts in access tokens. */
    audience: string;
    extraQueryParams: Record<string, string>;
  };
  devIdp: { port: number; testControls: boolean; accessTokenTtlSeconds: number | undefined };
  telemetry: {
    /** Where the browser posts telemetry: the configured connection string, else the built-in collector. */
    connectionString: string;
    /** Whether the configured connection string sends telemetry elsewhere than this server. */
    external: boolean;
    consent: 'ask' | 'implied';
  };
  collector: {
    dataDir: string;
    retentionDays: number;
    maxItemsPerSecond: number | undefined;
    /** The instrumentation keys the collector accepts. */
    instrumentationKeys: string[];
  };
}

/**
 * The instrumentation key of the built-in collector. Not a secret: it only tells the collector that an
 * envelope is meant for this Gatehouse.
 */
export const LOCAL_INSTRUMENTATION_KEY = '4a7e4005-6a7e-4b0e-8d5e-000000000001';

export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'config_invalid';
}

/** Validates the environment at once and names every missing or invalid key in one message. */
export function loadConfig(env: Record<string, string | undefined>): ServerConfig {
  const result = envSchema.safeParse(env);
  if (!result.success) {
    const problems = result.error.issues.map(
      (issue) => `  - ${issue.path.join('.') || '(environment)'}: ${issue.message}`,
    );
    throw new ConfigError(`Gatehouse cannot start: the configuration is invalid.\n${problems.join('\n')}`);
  }
  const e = result.data;
  const tls =
    e.TLS_CERT_FILE && e.TLS_KEY_FILE ? { certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE } : undefined;
  const publicOrigin = new URL(e.PUBLIC_ORIGIN ?? `${tls ? 'https' : 'http'}://localhost:${e.PORT}`).origin;
  const local = e.OIDC_AUTHORITY === undefined;
  const clientId = e.OIDC_CLIENT_ID ?? 'gatehouse';
  return {
    port: e.PORT,
    publicOrigin,
    trustProxy: e.TRUST_PROXY,
    tls,
    oidc: {
      authority: e.OIDC_AUTHORITY,
      clientId,
      scope: e.OIDC_SCOPE,
      rolesClaim: e.OIDC_ROLES_CLAIM,
      tokenStore: e.OIDC_TOKEN_STORE,
      audience: e.OIDC_AUDIENCE ?? (local ? `${publicOrigin}/api` : clientId),
      extraQueryParams: Object.fromEntries(new URLSearchParams(e.OIDC_EXTRA_AUTH_PARAMS ?? '')),
    },
    devIdp: {
      port: e.IDP_PORT,
      testControls: e.DEV_IDP_TEST_CONTROLS,
      accessTokenTtlSeconds: e.DEV_IDP_ACCESS_TOKEN_TTL,
    },
    telemetry: {
      connectionString:
        e.APPLICATIONINSIGHTS_CONNECTION_STRING ??
        `InstrumentationKey=${LOCAL_INSTRUMENTATION_KEY};IngestionEndpoint=${publicOrigin}/`,
      external: e.APPLICATIONINSIGHTS_CONNECTION_STRING !== undefined,
      consent: e.TELEMETRY_CONSENT,
    },
    collector: {
      dataDir: e.GATEHOUSE_DATA_DIR,
      retentionDays: e.TELEMETRY_RETENTION_DAYS,
      maxItemsPerSecond: e.TELEMETRY_MAX_ITEMS_PER_SECOND,
      instrumentationKeys: [LOCAL_INSTRUMENTATION_KEY],
    },
  };
}

/** Keys are case-insensitive in Azure Monitor connection strings; they come back lower-cased. */
export function parseConnectionString(value: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of value.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) fields[part.slice(0, at).trim().toLowerCase()] = part.slice(at + 1).trim();
  }
  return fields;
}

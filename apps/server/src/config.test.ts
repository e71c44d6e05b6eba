import { describe, expect, it } from 'vitest';
import { ConfigError, LOCAL_INSTRUMENTATION_KEY, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('starts with no configuration at all: local provider, defaults from the issue', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.devIdp.port).toBe(3001);
    expect(config.oidc).toEqual({
      authority: undefined,
      clientId: 'gatehouse',
      scope: 'openid profile email offline_access',
      rolesClaim: 'roles',
      tokenStore: 'session',
      audience: 'http://localhost:3000/api',
      extraQueryParams: {},
    });
  });

  it('takes a real provider from the environment', () => {
    const config = loadConfig({
      OIDC_AUTHORITY: 'https://tenant.eu.auth0.com/',
      OIDC_CLIENT_ID: 'abc',
      OIDC_AUDIENCE: 'https://api.example.com',
      OIDC_EXTRA_AUTH_PARAMS: 'audience=https://api.example.com',
      OIDC_TOKEN_STORE: 'memory',
      PORT: '8080',
      PUBLIC_ORIGIN: 'https://app.example.com/',
    });
    expect(config.oidc.authority).toBe('https://tenant.eu.auth0.com/');
    expect(config.oidc.extraQueryParams).toEqual({ audience: 'https://api.example.com' });
    expect(config.oidc.tokenStore).toBe('memory');
    expect(config.publicOrigin).toBe('https://app.example.com');
    expect(config.port).toBe(8080);
  });

  it('refuses the bundled provider in production or on a public origin, unless switched on', () => {
    for (const env of [{ NODE_ENV: 'production' }, { PUBLIC_ORIGIN: 'https://app.example.com' }]) {
      expect(() => loadConfig(env)).toThrow(ConfigError);
      expect(() => loadConfig(env)).toThrow(
        /OIDC_AUTHORITY: is required .*admin\/admin.*ALLOW_BUNDLED_DEV_IDP=1/,
      );
      expect(loadConfig({ ...env, ALLOW_BUNDLED_DEV_IDP: '1' }).oidc.authority).toBeUndefined();
    }
    expect(loadConfig({ PUBLIC_ORIGIN: 'http://127.0.0.1:8080' }).oidc.authority).toBeUndefined();
    expect(loadConfig({ PUBLIC_ORIGIN: 'http://gatehouse.localhost:8080' }).oidc.authority).toBeUndefined();
  });

  it('refuses a plain-http provider in production, except on loopback', () => {
    const provider = { NODE_ENV: 'production', OIDC_CLIENT_ID: 'gatehouse' };
    expect(() => loadConfig({ ...provider, OIDC_AUTHORITY: 'http://idp.example.com' })).toThrow(
      /OIDC_AUTHORITY: must use https when NODE_ENV=production/,
    );
    expect(loadConfig({ ...provider, OIDC_AUTHORITY: 'http://localhost:9000' }).oidc.authority).toBe(
      'http://localhost:9000',
    );
    expect(loadConfig({ ...provider, OIDC_AUTHORITY: 'https://idp.example.com' }).oidc.authority).toBe(
      'https://idp.example.com',
    );
    expect(loadConfig({ OIDC_AUTHORITY: 'http://idp.example.com', OIDC_CLIENT_ID: 'g' }).oidc.authority).toBe(
      'http://idp.example.com',
    );
  });

  it('names every missing or invalid key in one message', () => {
    let error: unknown;
    try {
      loadConfig({
        OIDC_AUTHORITY: 'not a url',
        PORT: '70000',
        OIDC_TOKEN_STORE: 'cookie',
        OIDC_SCOPE: 'profile email',
        TELEMETRY_CONSENT: 'maybe',
        APPLICATIONINSIGHTS_CONNECTION_STRING: 'IngestionEndpoint=https://x.example.com/',
      });
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(ConfigError);
    const message = (error as ConfigError).message;
    for (const key of [
      'OIDC_AUTHORITY',
      'PORT',
      'OIDC_TOKEN_STORE',
      'OIDC_SCOPE',
      'APPLICATIONINSIGHTS_CONNECTION_STRING',
      'TELEMETRY_CONSENT',
    ]) {
      expect(message).toContain(key);
    }
  });

  it('requires a client id with a real provider', () => {
    expect(() => loadConfig({ OIDC_AUTHORITY: 'https://login.example.com' })).toThrow(
      /OIDC_CLIENT_ID: is required/,
    );
  });

  it('takes introspection credentials as a pair, and only as a pair', () => {
    const provider = { OIDC_AUTHORITY: 'https://id.example.com', OIDC_CLIENT_ID: 'spa' };
    expect(() => loadConfig({ ...provider, OIDC_INTROSPECTION_CLIENT_ID: 'api' })).toThrow(
      /OIDC_INTROSPECTION_CLIENT_SECRET: .*go together/,
    );
    expect(() => loadConfig({ ...provider, OIDC_INTROSPECTION_CLIENT_SECRET: 's' })).toThrow(
      /OIDC_INTROSPECTION_CLIENT_ID: .*go together/,
    );
    expect(loadConfig(provider).oidc.introspectionClient).toBeUndefined();
    expect(
      loadConfig({ ...provider, OIDC_INTROSPECTION_CLIENT_ID: 'api', OIDC_INTROSPECTION_CLIENT_SECRET: 's' })
        .oidc.introspectionClient,
    ).toEqual({ client_id: 'api', client_secret: 's' });
  });

  it('trusts no proxy unless told, then exactly the number of proxies given (one by default)', () => {
    expect(loadConfig({}).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY_HOPS: '2' }).trustProxy).toBe(0);
    expect(loadConfig({ TRUST_PROXY: 'true' }).trustProxy).toBe(1);
    expect(loadConfig({ TRUST_PROXY: '1', TRUST_PROXY_HOPS: '2' }).trustProxy).toBe(2);
    expect(() => loadConfig({ TRUST_PROXY: '1', TRUST_PROXY_HOPS: '0' })).toThrow(/TRUST_PROXY_HOPS/);
  });

  it('serves https with a certificate and key, both or neither', () => {
    expect(loadConfig({}).tls).toBeUndefined();
    const config = loadConfig({
      TLS_CERT_FILE: '/etc/gatehouse/cert.pem',
      TLS_KEY_FILE: '/etc/gatehouse/key.pem',
    });
    expect(config.tls).toEqual({ certFile: '/etc/gatehouse/cert.pem', keyFile: '/etc/gatehouse/key.pem' });
    expect(config.publicOrigin).toBe('https://localhost:3000');
    expect(() => loadConfig({ TLS_CERT_FILE: '/etc/gatehouse/cert.pem' })).toThrow(
      /TLS_KEY_FILE: is required when the other of TLS_CERT_FILE and TLS_KEY_FILE is set/,
    );
    expect(() => loadConfig({ TLS_KEY_FILE: '/etc/gatehouse/key.pem' })).toThrow(
      /TLS_CERT_FILE: is required/,
    );
  });

  it('accepts an Azure Monitor connection string', () => {
    const value =
      'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/';
    const config = loadConfig({ APPLICATIONINSIGHTS_CONNECTION_STRING: value });
    expect(config.telemetry).toEqual({ connectionString: value, external: true, consent: 'ask' });
  });

  it('points telemetry at the built-in collector when no connection string is set', () => {
    const config = loadConfig({ PORT: '8080', TELEMETRY_CONSENT: 'implied', TELEMETRY_RETENTION_DAYS: '30' });
    expect(config.telemetry).toEqual({
      connectionString: `InstrumentationKey=${LOCAL_INSTRUMENTATION_KEY};IngestionEndpoint=http://localhost:8080/`,
      external: false,
      consent: 'implied',
    });
    expect(config.collector).toMatchObject({
      dataDir: './data',
      retentionDays: 30,
      instrumentationKeys: [LOCAL_INSTRUMENTATION_KEY],
    });
  });

  it('limits the collector and the HTTP server by default, and lets each limit be changed or turned off', () => {
    const defaults = loadConfig({});
    expect(defaults.collector).toMatchObject({
      maxItemsPerSecond: 5000,
      maxItemsPerSecondPerSource: 500,
      maxItemsPerRequest: 1000,
      maxStoreBytes: 5120 * 1024 * 1024,
    });
    expect(defaults.http).toEqual({
      requestTimeoutMs: 30_000,
      headersTimeoutMs: 10_000,
      maxConnections: 1000,
    });

    const changed = loadConfig({
      TELEMETRY_MAX_ITEMS_PER_SECOND: '0',
      TELEMETRY_MAX_ITEMS_PER_SECOND_PER_SOURCE: '50',
      TELEMETRY_MAX_ITEMS_PER_REQUEST: '250',
      TELEMETRY_MAX_STORE_MB: '0',
      HTTP_REQUEST_TIMEOUT_SECONDS: '5',
      HTTP_HEADERS_TIMEOUT_SECONDS: '20',
      HTTP_MAX_CONNECTIONS: '64',
    });
    expect(changed.collector).toMatchObject({
      maxItemsPerSecond: undefined,
      maxItemsPerSecondPerSource: 50,
      maxItemsPerRequest: 250,
      maxStoreBytes: 0,
    });
    // The headers cannot be given longer than the whole request.
    expect(changed.http).toEqual({ requestTimeoutMs: 5000, headersTimeoutMs: 5000, maxConnections: 64 });
    expect(() => loadConfig({ TELEMETRY_MAX_ITEMS_PER_REQUEST: '0' })).toThrow(
      /TELEMETRY_MAX_ITEMS_PER_REQUEST/,
    );
  });
});

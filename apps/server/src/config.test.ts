import { describe, expect, it } from 'vitest';
import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { ConfigError, loadConfig } from './config.js';

describe('loadConfig', () => {
  it('starts with no configuration at all: local provider, defaults from the issue', () => {
    const config = loadConfig({});
    expect(config.port).toBe(3000);
    expect(config.devIdp.port).toBe(3001);
    expect(config.oidc).toEqual({
      authority: undefined,
      mode: 'browser',
      introspectionClient: undefined,
      clientId: 'gatehouse',
      scope: 'openid profile email offline_access',
      rolesClaim: 'roles',
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
      PORT: '8080',
      PUBLIC_ORIGIN: 'https://app.example.com/',
    });
    expect(config.oidc.authority).toBe('https://tenant.eu.auth0.com/');
    expect(config.oidc.extraQueryParams).toEqual({ audience: 'https://api.example.com' });
    expect(config.publicOrigin).toBe('https://app.example.com');
    expect(config.port).toBe(8080);
  });

  it('refuses the bundled provider in production or on a public origin, unless switched on', () => {
    for (const env of [
      { NODE_ENV: 'production', GATEHOUSE_SINGLE_REPLICA: '1' },
      { PUBLIC_ORIGIN: 'https://app.example.com' },
    ]) {
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
    const provider = { NODE_ENV: 'production', GATEHOUSE_SINGLE_REPLICA: '1', OIDC_CLIENT_ID: 'gatehouse' };
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

  it('refuses production without shared state, unless told that this is the only replica', () => {
    const production = {
      NODE_ENV: 'production',
      OIDC_AUTHORITY: 'https://id.example.com',
      OIDC_CLIENT_ID: 'gatehouse',
      PUBLIC_ORIGIN: 'https://app.example.com',
    };
    expect(() => loadConfig(production)).toThrow(
      /REDIS_URL: is required when NODE_ENV=production: .*or GATEHOUSE_SINGLE_REPLICA=1 if this process is the only replica\.$/m,
    );
    expect(loadConfig({ ...production, GATEHOUSE_SINGLE_REPLICA: '1' }).redisUrl).toBeUndefined();
    expect(loadConfig({ ...production, REDIS_URL: 'rediss://redis.example.com:6380' }).redisUrl).toBe(
      'rediss://redis.example.com:6380',
    );
    // Several replicas by their own settings: "alone" contradicts them.
    const replica = {
      ...production,
      GATEHOUSE_SINGLE_REPLICA: '1',
      COLLECTOR_TOKEN: 'x'.repeat(32),
      TELEMETRY_USER_ID_SECRET: 'y'.repeat(32),
    };
    expect(() => loadConfig(replica)).toThrow(
      /REDIS_URL: is required when NODE_ENV=production with COLLECTOR_TOKEN \(several replicas\).*Set REDIS_URL on every replica\.$/m,
    );
    // Outside production, a replica without Redis starts (and warns).
    expect(() => loadConfig({ ...replica, NODE_ENV: '' })).not.toThrow();
  });

  it("trusts proxies by address: addresses, CIDR ranges and proxy-addr's names, naming what is wrong", () => {
    expect(loadConfig({ TRUST_PROXY: '10.0.0.0/8, 192.0.2.7,fd00::/8, loopback' }).trustProxy).toEqual([
      '10.0.0.0/8',
      '192.0.2.7',
      'fd00::/8',
      'loopback',
    ]);
    expect(() => loadConfig({ TRUST_PROXY: '10.0.0.0/33,balancer.internal, ::1' })).toThrow(
      /TRUST_PROXY: .*not: 10\.0\.0\.0\/33, balancer\.internal$/m,
    );
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
    expect(config.telemetry).toMatchObject({ connectionString: value, external: true, consent: 'ask' });
    expect(config.telemetry.relay).toBeUndefined();
  });

  it('relays through this origin: the browser gets the key and this origin, the relay the real endpoint', () => {
    const value =
      'InstrumentationKey=0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9;IngestionEndpoint=https://westeurope-5.in.applicationinsights.azure.com/';
    const config = loadConfig({
      APPLICATIONINSIGHTS_CONNECTION_STRING: value,
      TELEMETRY_RELAY: 'true',
      TELEMETRY_RELAY_LOCAL_COPY: 'true',
      TELEMETRY_RELAY_MAX_MB: '10',
      PUBLIC_ORIGIN: 'https://app.example.com',
      OIDC_AUTHORITY: 'https://idp.example.com',
      OIDC_CLIENT_ID: 'g',
    });
    expect(config.telemetry).toMatchObject({
      connectionString:
        'InstrumentationKey=0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9;IngestionEndpoint=https://app.example.com/',
      external: false,
      relay: { connectionString: value, maxBytes: 10 * 1024 * 1024, maxRetryMs: 300_000, localCopy: true },
    });
    expect(config.collector.instrumentationKeys).toEqual(['0f1e2d3c-4b5a-4978-8695-a4b3c2d1e0f9']);
  });

  it('refuses a relay without a connection string, a copy without a relay, a relay over plain http', () => {
    expect(() => loadConfig({ TELEMETRY_RELAY: 'true' })).toThrow(
      /TELEMETRY_RELAY: needs APPLICATIONINSIGHTS/,
    );
    expect(() => loadConfig({ TELEMETRY_RELAY_LOCAL_COPY: '1' })).toThrow(/needs TELEMETRY_RELAY=true/);
    const plain = 'InstrumentationKey=k;IngestionEndpoint=http://ingest.example.com/';
    expect(() => loadConfig({ TELEMETRY_RELAY: '1', APPLICATIONINSIGHTS_CONNECTION_STRING: plain })).toThrow(
      /IngestionEndpoint must use https for the relay/,
    );
    const loopback = 'InstrumentationKey=k;IngestionEndpoint=http://127.0.0.1:9999/';
    expect(
      loadConfig({ TELEMETRY_RELAY: '1', APPLICATIONINSIGHTS_CONNECTION_STRING: loopback }).telemetry.relay,
    ).toMatchObject({ connectionString: loopback, localCopy: false });
  });

  it('reads the dashboard from a Log Analytics workspace when one is named', () => {
    expect(loadConfig({}).telemetry.logAnalytics).toBeUndefined();
    const config = loadConfig({ LOG_ANALYTICS_WORKSPACE_ID: '11111111-2222-3333-4444-555555555555' });
    expect(config.telemetry.logAnalytics).toEqual({
      workspaceId: '11111111-2222-3333-4444-555555555555',
      endpoint: undefined,
      resourceId: undefined,
    });
    expect(() => loadConfig({ LOG_ANALYTICS_WORKSPACE_ID: 'my-workspace' })).toThrow(/a GUID/);
  });

  it('points telemetry at the built-in collector when no connection string is set', () => {
    const config = loadConfig({ PORT: '8080', TELEMETRY_CONSENT: 'implied', TELEMETRY_RETENTION_DAYS: '30' });
    expect(config.telemetry).toMatchObject({
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
      maxBytesPerSecondPerSource: 60 * 1024,
      maxBytesBurstPerSource: 1024 * 1024,
      maxBytesInFlight: 64 * 1024 * 1024,
      maxBytesInFlightPerSource: undefined,
      minBodyBytesPerSecond: 500,
      minBodyRateGraceMs: 5000,
      maxStoreBytes: 5120 * 1024 * 1024,
      storeMemoryMb: undefined,
    });
    // One source, sending all it may, needs at least a day to fill the default quota (ADR 0053).
    const { maxBytesPerSecondPerSource = 0, maxBytesBurstPerSource, maxStoreBytes } = defaults.collector;
    expect(maxBytesBurstPerSource + maxBytesPerSecondPerSource * 86_400).toBeLessThanOrEqual(maxStoreBytes);
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
      TELEMETRY_MAX_KB_PER_SECOND_PER_SOURCE: '0',
      TELEMETRY_MAX_KB_BURST_PER_SOURCE: '256',
      TELEMETRY_MAX_MB_IN_FLIGHT: '16',
      TELEMETRY_MAX_MB_IN_FLIGHT_PER_SOURCE: '0',
      TELEMETRY_MIN_BODY_BYTES_PER_SECOND: '0',
      TELEMETRY_MIN_BODY_RATE_GRACE_SECONDS: '10',
      TELEMETRY_STORE_MEMORY_MB: '256',
      HTTP_REQUEST_TIMEOUT_SECONDS: '5',
      HTTP_HEADERS_TIMEOUT_SECONDS: '20',
      HTTP_MAX_CONNECTIONS: '64',
    });
    expect(changed.collector).toMatchObject({
      maxItemsPerSecond: undefined,
      maxItemsPerSecondPerSource: 50,
      maxItemsPerRequest: 250,
      maxBytesPerSecondPerSource: undefined,
      maxBytesBurstPerSource: 256 * 1024,
      maxBytesInFlight: 16 * 1024 * 1024,
      maxBytesInFlightPerSource: 0,
      minBodyBytesPerSecond: 0,
      minBodyRateGraceMs: 10_000,
      maxStoreBytes: 0,
      storeMemoryMb: 256,
    });
    // The headers cannot be given longer than the whole request.
    expect(changed.http).toEqual({ requestTimeoutMs: 5000, headersTimeoutMs: 5000, maxConnections: 64 });
    expect(() => loadConfig({ TELEMETRY_MAX_ITEMS_PER_REQUEST: '0' })).toThrow(
      /TELEMETRY_MAX_ITEMS_PER_REQUEST/,
    );
    // Below what a large store needs to open, or not a number of MiB.
    for (const memory of ['128', '1.5', '1GB']) {
      expect(() => loadConfig({ TELEMETRY_STORE_MEMORY_MB: memory })).toThrow(/TELEMETRY_STORE_MEMORY_MB/);
    }
  });
  it('takes the store holder settings of several replicas, and refuses them incomplete or in clear', () => {
    const token = 'x'.repeat(32);
    const secret = 'y'.repeat(32);
    expect(loadConfig({}).collector).toMatchObject({ forwardTo: undefined, token: undefined });
    const replica = loadConfig({
      COLLECTOR_URL: 'http://10.0.0.5:3000',
      COLLECTOR_TOKEN: token,
      TELEMETRY_USER_ID_SECRET: secret,
    });
    expect(replica.collector).toMatchObject({ forwardTo: 'http://10.0.0.5:3000', token });
    // A forwarding replica holds telemetry 5 s for a restarting store holder, or what it is told.
    expect(replica.collector.waitForStoreHolderMs).toBe(5_000);
    expect(loadConfig({ COLLECTOR_WAIT_SECONDS: '20' }).collector.waitForStoreHolderMs).toBe(20_000);
    expect(() => loadConfig({ COLLECTOR_WAIT_SECONDS: '600' })).toThrow(/COLLECTOR_WAIT_SECONDS/);
    expect(() => loadConfig({ COLLECTOR_URL: 'http://10.0.0.5:3000' })).toThrow(
      /COLLECTOR_TOKEN: is required when COLLECTOR_URL is set/,
    );
    expect(() => loadConfig({ COLLECTOR_TOKEN: 'short', TELEMETRY_USER_ID_SECRET: secret })).toThrow(
      /COLLECTOR_TOKEN: must be at least 32 characters/,
    );
    expect(() => loadConfig({ COLLECTOR_TOKEN: token })).toThrow(/TELEMETRY_USER_ID_SECRET: is required/);
    expect(() =>
      loadConfig({ COLLECTOR_TOKEN: token, TELEMETRY_USER_ID_SECRET: secret, API_DPOP_NONCES: '1' }),
    ).toThrow(/API_DPOP_NONCE_SECRET: is required/);
    const production = {
      NODE_ENV: 'production',
      ALLOW_BUNDLED_DEV_IDP: '1',
      COLLECTOR_TOKEN: token,
      TELEMETRY_USER_ID_SECRET: secret,
      REDIS_URL: 'redis://127.0.0.1:6379',
    };
    expect(() => loadConfig({ ...production, COLLECTOR_URL: 'http://10.0.0.5:3000' })).toThrow(
      /COLLECTOR_URL: must use https when NODE_ENV=production/,
    );
    expect(loadConfig({ ...production, COLLECTOR_URL: 'http://127.0.0.1:3000' }).collector.forwardTo).toBe(
      'http://127.0.0.1:3000',
    );
  });

  it('takes REDIS_URL: rediss, or plain redis only on loopback in production; none by default', () => {
    expect(loadConfig({}).redisUrl).toBeUndefined();
    expect(() => loadConfig({ REDIS_URL: 'http://cache.example.com' })).toThrow(/REDIS_URL/);
    const production = { NODE_ENV: 'production', ALLOW_BUNDLED_DEV_IDP: '1' };
    expect(() => loadConfig({ ...production, REDIS_URL: 'redis://10.0.0.7:6379' })).toThrow(
      /REDIS_URL: must use rediss when NODE_ENV=production .*only a loopback address may use redis$/m,
    );
    expect(loadConfig({ ...production, REDIS_URL: 'redis://127.0.0.1:6379' }).redisUrl).toBe(
      'redis://127.0.0.1:6379',
    );
    expect(loadConfig({ ...production, REDIS_URL: 'rediss://:pw@cache.example.com:6380' }).redisUrl).toBe(
      'rediss://:pw@cache.example.com:6380',
    );
    // Outside production, any Redis (a developer's, on another machine) is taken.
    expect(loadConfig({ REDIS_URL: 'redis://10.0.0.7:6379' }).redisUrl).toBe('redis://10.0.0.7:6379');
  });

  it('refuses the development server (--dev) with NODE_ENV=production, in one line saying what to run', () => {
    const production = {
      NODE_ENV: 'production',
      GATEHOUSE_SINGLE_REPLICA: '1',
      OIDC_AUTHORITY: 'https://idp.example.com',
      OIDC_CLIENT_ID: 'g',
    };
    const refusal = /^Gatehouse cannot start: --dev \(npm run dev\) .*npm start.*$/;
    expect(() => loadConfig(production, { dev: true })).toThrow(ConfigError);
    expect(() => loadConfig(production, { dev: true })).toThrow(refusal);
    // Before the production rules, so the list of what production lacks does not hide it.
    expect(() => loadConfig({ NODE_ENV: 'production' }, { dev: true })).toThrow(refusal);
    expect(loadConfig(production).listenHost).toBeUndefined();
  });

  it('listens on loopback only in development: the public origin’s loopback address, else localhost', () => {
    expect(loadConfig({}, { dev: true }).listenHost).toBe('localhost');
    expect(loadConfig({ PUBLIC_ORIGIN: 'http://127.0.0.1:3000' }, { dev: true }).listenHost).toBe(
      '127.0.0.1',
    );
    expect(loadConfig({ PUBLIC_ORIGIN: 'http://[::1]:3000' }, { dev: true }).listenHost).toBe('::1');
    expect(loadConfig({ PUBLIC_ORIGIN: 'http://app.localhost:3000' }, { dev: true }).listenHost).toBe(
      'localhost',
    );
    const elsewhere = { PUBLIC_ORIGIN: 'https://dev.example.com', ALLOW_BUNDLED_DEV_IDP: '1' };
    expect(loadConfig(elsewhere, { dev: true }).listenHost).toBe('localhost');
    // Outside development every interface, as before (a container's port is published from outside).
    expect(loadConfig({}).listenHost).toBeUndefined();
  });

  describe('BFF mode (OIDC_MODE=bff)', () => {
    const provider = { OIDC_MODE: 'bff', OIDC_AUTHORITY: 'https://idp.example.com', OIDC_CLIENT_ID: 'app' };

    it('needs the client credentials of a confidential client from a real provider', () => {
      expect(() => loadConfig(provider)).toThrow(/OIDC_CLIENT_SECRET: is required with OIDC_MODE=bff/);
      expect(() => loadConfig({ ...provider, OIDC_CLIENT_AUTH: 'private_key_jwt' })).toThrow(
        /OIDC_CLIENT_PRIVATE_KEY_FILE: is required/,
      );
      const config = loadConfig({
        ...provider,
        OIDC_CLIENT_SECRET: 's3cret',
        OIDC_CLIENT_AUTH: 'client_secret_post',
      });
      expect(config.bff?.clientAuth).toEqual({ method: 'client_secret_post', secret: 's3cret' });
      expect(config.bff).toMatchObject({ idleMs: 60 * 60_000, maxMs: 24 * 3_600_000 });
      expect(
        loadConfig({ ...provider, OIDC_CLIENT_PRIVATE_KEY_FILE: '/run/key.pem' }).bff?.clientAuth,
      ).toEqual({
        method: 'private_key_jwt',
        keyFile: '/run/key.pem',
      });
    });

    it('makes a secret of its own for the bundled provider, which registers client_secret_basic only', () => {
      const first = loadConfig({ OIDC_MODE: 'bff' }).bff?.clientAuth;
      expect(first).toMatchObject({ method: 'client_secret_basic' });
      expect(first && 'secret' in first && first.secret.length).toBeGreaterThanOrEqual(32);
      expect(() => loadConfig({ OIDC_MODE: 'bff', OIDC_CLIENT_AUTH: 'client_secret_post' })).toThrow(
        /OIDC_CLIENT_AUTH: must be client_secret_basic/,
      );
    });

    it('refuses a plain-http public origin (no __Host- cookie) and required DPoP (the browser has no key)', () => {
      const secret = { ...provider, OIDC_CLIENT_SECRET: 's' };
      expect(() => loadConfig({ ...secret, PUBLIC_ORIGIN: 'http://app.example.com' })).toThrow(
        /PUBLIC_ORIGIN: must use https with OIDC_MODE=bff/,
      );
      expect(loadConfig({ ...secret, PUBLIC_ORIGIN: 'http://localhost:8080' }).oidc.mode).toBe('bff');
      expect(() => loadConfig({ ...secret, API_DPOP: 'required' })).toThrow(/API_DPOP: cannot be "required"/);
    });

    it("refuses client credentials in browser mode, where they would be every visitor's", () => {
      expect(() => loadConfig({ OIDC_CLIENT_SECRET: 's' })).toThrow(
        /OIDC_CLIENT_SECRET: is read only with OIDC_MODE=bff/,
      );
      expect(loadConfig({}).bff).toBeUndefined();
    });
  });
});

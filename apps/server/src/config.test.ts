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
});

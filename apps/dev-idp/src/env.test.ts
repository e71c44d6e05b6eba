import { describe, expect, it } from 'vitest';

import { ConfigError, environment } from '@gatehouse/config';
import { readDevIdpEnv } from './env.js';

describe('readDevIdpEnv', () => {
  it('uses the defaults when nothing is set', () => {
    expect(readDevIdpEnv({})).toEqual({
      port: 3001,
      appOrigin: 'http://localhost:3000',
      testControls: false,
      testControlsSecret: undefined,
      accessTokenTtlSeconds: undefined,
    });
  });

  it('reads every setting, and treats empty values as unset', () => {
    expect(
      readDevIdpEnv({
        IDP_PORT: '4001',
        APP_ORIGIN: 'http://127.0.0.1:5173/',
        DEV_IDP_TEST_CONTROLS: '1',
        DEV_IDP_TEST_CONTROLS_SECRET: 'sixteen-chars-ok',
        DEV_IDP_ACCESS_TOKEN_TTL: '70',
        UNRELATED: 'x',
      }),
    ).toEqual({
      port: 4001,
      appOrigin: 'http://127.0.0.1:5173',
      testControls: true,
      testControlsSecret: 'sixteen-chars-ok',
      accessTokenTtlSeconds: 70,
    });
    expect(readDevIdpEnv({ IDP_PORT: '', DEV_IDP_ACCESS_TOKEN_TTL: '' }).port).toBe(3001);
  });

  it('names every invalid key in one message', () => {
    const env = {
      IDP_PORT: 'abc',
      APP_ORIGIN: 'http://localhost:3000/app',
      DEV_IDP_TEST_CONTROLS: 'yes',
      DEV_IDP_TEST_CONTROLS_SECRET: 'short',
      DEV_IDP_ACCESS_TOKEN_TTL: '0',
    };
    expect(() => readDevIdpEnv(env)).toThrow(ConfigError);
    let message = '';
    try {
      readDevIdpEnv(env);
    } catch (error) {
      message = (error as Error).message;
    }
    const lines = message.split('\n');
    expect(lines[0]).toBe('dev-idp cannot start: the configuration is invalid.');
    // One line a key, as the server says it.
    expect(lines.slice(1).map((line) => line.split(':')[0]?.trim())).toEqual(
      Object.keys(env).map((key) => `- ${key}`),
    );
  });

  it('refuses a port out of range and a non-http origin', () => {
    expect(() => readDevIdpEnv({ IDP_PORT: '70000' })).toThrow(/IDP_PORT: must be between 1 and 65535/);
    expect(() => readDevIdpEnv({ APP_ORIGIN: 'ftp://example.com' })).toThrow(
      /APP_ORIGIN: must be an http\(s\) origin/,
    );
    expect(() => readDevIdpEnv({ APP_ORIGIN: 'nope' })).toThrow(/APP_ORIGIN: must be an http\(s\) origin/);
  });

  it('reads the shared variables by the rules the server reads them with', () => {
    // One definition (packages/config): true/false work as 1/0, and the TTL has the server's cap.
    expect(readDevIdpEnv({ DEV_IDP_TEST_CONTROLS: 'true' }).testControls).toBe(true);
    expect(() => readDevIdpEnv({ DEV_IDP_ACCESS_TOKEN_TTL: '86401' })).toThrow(
      /DEV_IDP_ACCESS_TOKEN_TTL: must be at most/,
    );
    expect(() => environment.parse({ IDP_PORT: '0' })).toThrow(/between 1 and 65535/);
  });
});

import { describe, expect, it } from 'vitest';

import { InvalidEnvError, readDevIdpEnv } from './env.js';

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
    expect(() => readDevIdpEnv(env)).toThrow(InvalidEnvError);
    let message = '';
    try {
      readDevIdpEnv(env);
    } catch (error) {
      message = (error as Error).message;
    }
    for (const key of Object.keys(env)) expect(message).toContain(key);
    expect(message.split('\n')).toHaveLength(1);
  });

  it('refuses a port out of range and a non-http origin', () => {
    expect(() => readDevIdpEnv({ IDP_PORT: '70000' })).toThrow(/IDP_PORT must be between 0 and 65535/);
    expect(() => readDevIdpEnv({ APP_ORIGIN: 'ftp://example.com' })).toThrow(
      /APP_ORIGIN must be an http\(s\) origin/,
    );
    expect(() => readDevIdpEnv({ APP_ORIGIN: 'nope' })).toThrow(/APP_ORIGIN must be an http\(s\) origin/);
  });
});

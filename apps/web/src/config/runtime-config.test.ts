import { describe, expect, it } from 'vitest';
import { readRuntimeConfig } from './runtime-config';

function documentWith(json: string): Document {
  const doc = document.implementation.createHTMLDocument();
  const script = doc.createElement('script');
  script.id = 'gatehouse-config';
  script.type = 'application/json';
  script.textContent = json;
  doc.head.append(script);
  return doc;
}

const valid = {
  oidc: {
    mode: 'browser',
    authority: 'http://localhost:3001',
    clientId: 'gatehouse',
    scope: 'openid profile',
    rolesClaim: 'roles',
    extraQueryParams: {},
  },
  telemetry: {
    connectionString: 'InstrumentationKey=k;IngestionEndpoint=http://localhost:3000/',
    consent: 'ask',
  },
};

describe('readRuntimeConfig', () => {
  it('reads the configuration the server embedded', () => {
    expect(readRuntimeConfig(documentWith(JSON.stringify(valid)))).toEqual(valid);
  });

  it('names every invalid key', () => {
    const broken = {
      ...valid,
      oidc: { ...valid.oidc, authority: 'nope', clientId: '', rolesClaim: '' },
    };
    expect(() => readRuntimeConfig(documentWith(JSON.stringify(broken)))).toThrow(
      /oidc\.authority.*oidc\.clientId.*oidc\.rolesClaim/s,
    );
  });

  it('refuses text that is not JSON', () => {
    expect(() => readRuntimeConfig(documentWith('{'))).toThrow(/not valid JSON/);
  });
});

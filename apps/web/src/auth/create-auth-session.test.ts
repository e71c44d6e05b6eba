import { afterEach, describe, expect, it, vi } from 'vitest';
import { BffSession } from './bff-session';
import { createAuthSession } from './create-auth-session';
import { AUTHORITY, testOidcConfig } from './test-provider';

/** The page's runtime configuration element, as the server writes it. */
function configure(config: unknown): void {
  const script = document.createElement('script');
  script.id = 'gatehouse-config';
  script.type = 'application/json';
  script.textContent = JSON.stringify(config);
  document.head.append(script);
}

const telemetry = {
  connectionString: `InstrumentationKey=k;IngestionEndpoint=${AUTHORITY}/`,
  consent: 'ask',
};

afterEach(() => {
  document.getElementById('gatehouse-config')?.remove();
  vi.unstubAllGlobals();
});

describe('createAuthSession', () => {
  it("loads the BFF session for oidc.mode 'bff', which asks the server who is signed in", async () => {
    configure({ oidc: { ...testOidcConfig, mode: 'bff' }, telemetry });
    const fetch = vi.fn<typeof window.fetch>(() => Promise.resolve(Response.json({ user: null })));
    vi.stubGlobal('fetch', fetch);
    const session = await createAuthSession();
    expect(session).toBeInstanceOf(BffSession);
    expect(session.getState()).toEqual({ status: 'signed-out' });
    expect(fetch.mock.calls.map(([input, init]) => new Request(input, init).url)).toEqual([
      `${window.location.origin}/bff/user`,
    ]);
  });

  it('says sign-in is unavailable when the configuration is invalid', async () => {
    configure({ oidc: { ...testOidcConfig, mode: 'cookie' }, telemetry });
    const session = await createAuthSession();
    expect(session.getState()).toMatchObject({ status: 'signed-out', notice: { code: 'config_invalid' } });
  });
});

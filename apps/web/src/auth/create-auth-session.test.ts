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
  window.sessionStorage.clear();
  window.history.replaceState(null, '', '/');
});

/** The page's end of a shared worker: what the page posted to the vault. */
function stubSharedWorker() {
  const posted: unknown[] = [];
  const started: string[] = [];
  class FakeSharedWorker {
    readonly port = {
      start: () => undefined,
      addEventListener: () => undefined,
      postMessage: (message: unknown) => posted.push(message),
    };
    constructor(url: URL) {
      started.push(url.pathname);
    }
  }
  vi.stubGlobal('SharedWorker', FakeSharedWorker);
  vi.stubGlobal('Worker', FakeSharedWorker);
  return { posted, started };
}

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

  it("on the redirect URI, hands the code to the vault once: from the page's first module, and the session takes that up", async () => {
    configure({ oidc: testOidcConfig, telemetry });
    const { posted, started } = stubSharedWorker();
    window.history.replaceState(null, '', '/callback?code=c1&state=s1');
    window.sessionStorage.setItem(
      'gatehouse.oidc.s1',
      JSON.stringify({ id: 's1', data: { nonce: 'n1', returnTo: '/' } }),
    );
    // A fresh page: its modules as the browser first evaluates them.
    vi.resetModules();
    await import('./start-on-callback');
    expect(started).toHaveLength(1);
    expect(posted).toEqual([
      expect.objectContaining({ op: 'redeem', args: [expect.objectContaining({ nonce: 'n1' })] }),
    ]);

    const { createAuthSession: create } = await import('./create-auth-session');
    await create();
    expect(started).toHaveLength(1);
    expect(posted.filter((message) => (message as { op?: string }).op === 'redeem')).toHaveLength(1);
  });

  it('starts no vault from the first module elsewhere, nor in BFF mode', async () => {
    const { started } = stubSharedWorker();
    configure({ oidc: { ...testOidcConfig, mode: 'bff' }, telemetry });
    window.history.replaceState(null, '', '/callback?code=c1&state=s1');
    vi.resetModules();
    await import('./start-on-callback');
    document.getElementById('gatehouse-config')?.remove();
    configure({ oidc: testOidcConfig, telemetry });
    window.history.replaceState(null, '', '/profile');
    vi.resetModules();
    await import('./start-on-callback');
    expect(started).toHaveLength(0);
  });
});

import { expect, test, type Page } from '@playwright/test';
import { TEST_CONTROLS_SECRET } from '../playwright.config';
import { signIn, startServer, type StartedServer } from './support';

/**
 * RFC 10017's threat: a script running in the signed-in page (an XSS, a compromised dependency, an
 * extension's content script) tries to take the tokens, against a provider that issues bearer tokens
 * (the bundled one with DPoP off, as Entra ID and Google do). It reads every storage the page can,
 * the window's own properties, and wraps fetch and XMLHttpRequest before the app calls its API: it must
 * find no access, refresh or ID token, and no Authorization header. What the provider issued is read
 * from the provider itself (its test controls), since the point is that the page cannot tell.
 */
/** Both modes (OIDC_MODE): the token vault in the browser, and the BFF, where the server is the client. */
const servers: Record<'browser' | 'bff', StartedServer | undefined> = { browser: undefined, bff: undefined };
test.beforeAll(async () => {
  [servers.browser, servers.bff] = await Promise.all([
    startServer(24, { DEV_IDP_DPOP: 'off', DEV_IDP_TEST_CONTROLS: '1' }),
    startServer(106, { OIDC_MODE: 'bff', DEV_IDP_DPOP: 'off', DEV_IDP_TEST_CONTROLS: '1' }),
  ]);
});
test.afterAll(async () => {
  await Promise.all(Object.values(servers).flatMap((server) => (server ? [server.stop()] : [])));
});

async function issuedTokens(provider: string): Promise<string[]> {
  const response = await fetch(`${provider}/__test/issued-tokens`, {
    headers: { 'X-Test-Controls-Secret': TEST_CONTROLS_SECRET },
  });
  expect(response.status).toBe(200);
  const { grants } = (await response.json()) as { grants: Array<Record<string, unknown>> };
  return grants.flatMap((grant) =>
    [grant.access_token, grant.refresh_token, grant.id_token].filter(
      (t): t is string => typeof t === 'string',
    ),
  );
}

/** The attacker's script: everything it can read, as text, and the headers of the requests it saw. */
async function injectAndLoot(page: Page): Promise<void> {
  await page.evaluate(() => {
    const seen: { headers: string[] } = { headers: [] };
    const record = (name: string, value: string) => seen.headers.push(`${name}: ${value}`);
    const originalFetch = window.fetch.bind(window);
    window.fetch = (input, init) => {
      const request = new Request(input, init);
      request.headers.forEach((value, name) => record(name, value));
      return originalFetch(input, init);
    };
    const setHeader = Object.getOwnPropertyDescriptor(XMLHttpRequest.prototype, 'setRequestHeader')
      ?.value as (this: XMLHttpRequest, name: string, value: string) => void;
    XMLHttpRequest.prototype.setRequestHeader = function (name: string, value: string) {
      record(name, value);
      setHeader.call(this, name, value);
    };
    (window as unknown as { __loot: typeof seen }).__loot = seen;
  });
}

async function everythingReadable(page: Page): Promise<string> {
  return page.evaluate(async () => {
    const parts: string[] = [];
    for (const storage of [sessionStorage, localStorage]) {
      for (let i = 0; i < storage.length; i++) {
        const key = storage.key(i) ?? '';
        parts.push(key, storage.getItem(key) ?? '');
      }
    }
    parts.push(document.cookie);
    for (const { name } of await indexedDB.databases()) {
      if (!name) continue;
      const database = await new Promise<IDBDatabase>((resolve, reject) => {
        const open = indexedDB.open(name);
        open.onsuccess = () => resolve(open.result);
        open.onerror = () => reject(new Error(String(open.error)));
      });
      for (const store of Array.from(database.objectStoreNames)) {
        const records = await new Promise<unknown[]>((resolve) => {
          const read = database.transaction(store, 'readonly').objectStore(store).getAll();
          read.onsuccess = () => resolve(read.result as unknown[]);
          read.onerror = () => resolve([]);
        });
        for (const record of records) {
          try {
            parts.push(JSON.stringify(record));
          } catch {
            parts.push(String(record));
          }
        }
      }
      database.close();
    }
    // The window's own properties, and what they hold a level down (a global store, a client object).
    for (const key of Object.getOwnPropertyNames(window)) {
      let value: unknown;
      try {
        value = (window as unknown as Record<string, unknown>)[key];
      } catch {
        continue;
      }
      if (typeof value === 'string') parts.push(value);
      else if (value && typeof value === 'object') {
        try {
          parts.push(JSON.stringify(value, (_k, v: unknown) => (typeof v === 'function' ? undefined : v)));
        } catch {
          // Cyclic or exotic: its own string values, one level down.
          for (const inner of Object.values(value as Record<string, unknown>)) {
            if (typeof inner === 'string') parts.push(inner);
          }
        }
      }
    }
    const loot = (window as unknown as { __loot?: { headers: string[] } }).__loot;
    parts.push(...(loot?.headers ?? []));
    return parts.join('\n');
  });
}

for (const mode of ['browser', 'bff'] as const) {
  test(`in ${mode} mode, a script injected into the signed-in page finds no token and no Authorization header`, async ({
    page,
  }) => {
    const server = servers[mode];
    if (!server) throw new Error(`no ${mode} server`);
    await page.goto(server.origin);
    await signIn(page, undefined, server.provider);
    const tokens = await issuedTokens(server.provider);
    expect(tokens.length).toBeGreaterThanOrEqual(3); // access, refresh and ID token, at least

    await injectAndLoot(page);
    // The app calls its API (the Profile page), with the attacker's wrappers in place.
    await page.getByRole('navigation').getByRole('link', { name: 'Profile' }).click();
    await expect(page.getByTestId('api-me')).toContainText('"sub": "alice"');

    const readable = await everythingReadable(page);
    expect(readable).not.toMatch(/authorization:/i);
    // The ID token goes to the provider with the sign-out request only (id_token_hint), so it is not
    // readable before; access and refresh tokens never are.
    for (const token of tokens)
      expect(readable.includes(token), 'a token is readable by the page').toBe(false);
  });
}

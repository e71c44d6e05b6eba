/**
 * Functions that run inside the page, the same source for every driver (Playwright, WebDriver BiDi,
 * WebDriver classic): each is sent as text, so each is self-contained (no import, no outer variable)
 * and takes one JSON argument.
 */

/** What a person would look for: an element by its role and accessible name, a labelled field, a test id. */
export type Target =
  | { testId: string; within?: Target }
  | { label: string; within?: Target }
  | {
      role: 'button' | 'link' | 'heading' | 'dialog' | 'status' | 'banner' | 'navigation';
      /** The accessible name, whole (whitespace collapsed); any name when left out. */
      name?: string;
      within?: Target;
    };

/**
 * The first visible element that matches `target` (or its text, whitespace collapsed, with `text`), or
 * null. A small subset of the accessibility tree's rules (aria-labelledby, aria-label, <label>, text
 * content), enough for Gatehouse's and the local provider's markup, so that every browser is asked the
 * same question. One function for both, since a function sent to the page cannot call another.
 */
export function locate({ target, text }: { target: Target; text?: boolean }): Element | string | null {
  const normalize = (text: string | null | undefined) => (text ?? '').replace(/\s+/g, ' ').trim();
  const visible = (element: Element) =>
    element.getClientRects().length > 0 && getComputedStyle(element).visibility !== 'hidden';
  const nameOf = (element: Element): string => {
    const labelledBy = element.getAttribute('aria-labelledby');
    if (labelledBy) {
      return normalize(
        labelledBy
          .split(/\s+/)
          .map((id) => document.getElementById(id)?.textContent ?? '')
          .join(' '),
      );
    }
    const label = element.getAttribute('aria-label');
    if (label) return normalize(label);
    const labels = (element as HTMLInputElement).labels;
    if (labels && labels.length > 0) return normalize(Array.from(labels, (l) => l.textContent).join(' '));
    if (element instanceof HTMLInputElement && /^(submit|button)$/.test(element.type)) {
      return normalize(element.value);
    }
    return normalize(element.textContent);
  };
  const selectors: Record<string, string> = {
    button: 'button, [role="button"], input[type="submit"], input[type="button"]',
    link: 'a[href], [role="link"]',
    heading: 'h1, h2, h3, h4, h5, h6, [role="heading"]',
    dialog: 'dialog, [role="dialog"], [role="alertdialog"]',
    status: '[role="status"], output',
    banner: 'header, [role="banner"]',
    navigation: 'nav, [role="navigation"]',
  };
  const find = (root: ParentNode, wanted: Target): Element | null => {
    const scope = wanted.within ? find(root, wanted.within) : root;
    if (!scope) return null;
    let candidates: Element[];
    let name: string | undefined;
    if ('testId' in wanted) {
      candidates = Array.from(scope.querySelectorAll(`[data-testid="${CSS.escape(wanted.testId)}"]`));
    } else if ('label' in wanted) {
      candidates = Array.from(scope.querySelectorAll('input, select, textarea'));
      name = wanted.label;
    } else {
      candidates = Array.from(scope.querySelectorAll(selectors[wanted.role] ?? wanted.role));
      name = wanted.name;
    }
    return (
      candidates.find((element) => visible(element) && (name === undefined || nameOf(element) === name)) ??
      null
    );
  };
  const found = find(document, target);
  return text ? found && normalize(found.textContent) : found;
}

/**
 * The page's own traces of the telemetry SDK: its chunk among the loaded resources, and every cookie or
 * storage key it writes (ai_*). Empty before consent.
 */
export function telemetryTraces(): { sdkChunks: string[]; keys: string[] } {
  const sdkChunks = performance
    .getEntriesByType('resource')
    .map((entry) => entry.name)
    .filter((url) => /\/assets\/sdk-[^/]*\.js$/.test(url));
  const cookies = document.cookie
    .split(';')
    .map((cookie) => cookie.split('=')[0]?.trim() ?? '')
    .filter(Boolean);
  const keys = [...cookies, ...Object.keys(localStorage), ...Object.keys(sessionStorage)].filter((key) =>
    /^ai_/i.test(key),
  );
  return { sdkChunks, keys };
}

/**
 * The SDK's anonymous ids from its cookies (`ai_session` is `id|acquired|renewed`, `ai_user` is
 * `id|created`), '' where it has none yet.
 */
export function telemetryIds(): { session: string; user: string } {
  const id = (name: string) => {
    const cookie = document.cookie.split('; ').find((entry) => entry.startsWith(`${name}=`));
    return decodeURIComponent(cookie?.slice(name.length + 1) ?? '').split('|')[0] ?? '';
  };
  return { session: id('ai_session'), user: id('ai_user') };
}

/**
 * Fires the page's `pagehide`, so the SDK's own page-hide handler hands pending telemetry over while
 * the page stays (real navigations deliver the same way; collector-store.spec.ts proves it).
 */
export function hidePage(): void {
  window.dispatchEvent(new PageTransitionEvent('pagehide', { persisted: false }));
}

/** Who the tab shows as signed in (the session hint: claims, never a token), null when signed out. */
export function storedSession(): string | null {
  return sessionStorage.getItem('gatehouse.session.user');
}

export interface ApiAnswer {
  status: number;
  /** The `WWW-Authenticate` header, '' when there is none. */
  challenge: string;
  body: unknown;
}

/**
 * Calls `path` of the API (GET unless `method` says otherwise, with `body` as JSON) from inside the page,
 * as a script holding `token` in this browser could: as `Authorization: DPoP` with a proof signed by the
 * browser's own non-extractable key (read from the IndexedDB store the token vault uses) when the token
 * is DPoP-bound (`tokenType`), else as a bearer token. Node cannot make such a proof: that is the point
 * of the binding. (The tests learn tokens from the provider: the app never shows them.)
 */
export async function callApi({
  path,
  token,
  tokenType,
  method = 'GET',
  body: json,
}: {
  path: string;
  token: string;
  tokenType?: string | undefined;
  method?: string | undefined;
  body?: unknown;
}): Promise<ApiAnswer> {
  const session = { token_type: tokenType };
  const accessToken = token;
  const keys = await new Promise<CryptoKeyPair | undefined>((resolve, reject) => {
    const open = indexedDB.open('oidc');
    open.onupgradeneeded = () => open.result.createObjectStore('dpop');
    open.onerror = () => reject(new Error(String(open.error)));
    open.onsuccess = () => {
      // The store holds one key, under the client id (whatever OIDC_CLIENT_ID is).
      const read = open.result.transaction('dpop', 'readonly').objectStore('dpop').getAll();
      read.onerror = () => reject(new Error(String(read.error)));
      read.onsuccess = () => resolve((read.result as Array<{ keys?: CryptoKeyPair }>)[0]?.keys);
    };
  });
  const url = new URL(path, location.origin);
  const authorization = async (nonce: string | null): Promise<Record<string, string>> => {
    if (!keys || session.token_type?.toLowerCase() !== 'dpop') {
      return { Authorization: `Bearer ${accessToken}` };
    }
    const encode = (bytes: ArrayBuffer | Uint8Array) =>
      btoa(String.fromCharCode(...new Uint8Array(bytes)))
        .replace(/\+/g, '-')
        .replace(/\//g, '_')
        .replace(/=+$/, '');
    const text = (value: unknown) => encode(new TextEncoder().encode(JSON.stringify(value)));
    const { kty, crv, x, y } = await crypto.subtle.exportKey('jwk', keys.publicKey);
    const ath = encode(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(accessToken)));
    const claims = {
      jti: crypto.randomUUID(),
      htm: method,
      htu: `${url.origin}${url.pathname}`,
      iat: Math.floor(Date.now() / 1000),
      ath,
      ...(nonce ? { nonce } : {}),
    };
    const input = `${text({ alg: 'ES256', typ: 'dpop+jwt', jwk: { kty, crv, x, y } })}.${text(claims)}`;
    const signature = await crypto.subtle.sign(
      { name: 'ECDSA', hash: 'SHA-256' },
      keys.privateKey,
      new TextEncoder().encode(input),
    );
    return { Authorization: `DPoP ${accessToken}`, DPoP: `${input}.${encode(signature)}` };
  };
  const send = async (nonce: string | null) =>
    fetch(url, {
      method,
      headers: {
        ...(await authorization(nonce)),
        ...(json === undefined ? {} : { 'Content-Type': 'application/json' }),
      },
      ...(json === undefined ? {} : { body: JSON.stringify(json) }),
    });
  let response = await send(null);
  // RFC 9449 9: an API that asks for its nonce gets the request once more, with it.
  const nonce = response.headers.get('DPoP-Nonce');
  if (
    response.status === 401 &&
    nonce &&
    /use_dpop_nonce/.test(response.headers.get('WWW-Authenticate') ?? '')
  ) {
    response = await send(nonce);
  }
  const body: unknown = await response.json().catch(() => null);
  return { status: response.status, challenge: response.headers.get('WWW-Authenticate') ?? '', body };
}

/**
 * Whether this document's telemetry SDK tracks `fetch` calls (it wraps `window.fetch` once loaded,
 * after the first paint): a call made before carries no `traceparent` and is not reported, by design.
 */
export function tracksFetch(): boolean {
  // Its source text is all that is asked of it; it is not called.
  // eslint-disable-next-line @typescript-eslint/unbound-method
  return !String(window.fetch).includes('[native code]');
}

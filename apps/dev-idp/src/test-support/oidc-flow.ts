// A tiny scripted "browser + SPA" for the tests: fetch with manual redirects and a cookie jar, PKCE, and the
// authorization-code flow against a running dev-idp. Not part of the built package (see tsconfig.build.json).
import { createHash, randomBytes } from 'node:crypto';

export const APP_ORIGIN = 'http://localhost:3000';
export const CLIENT_ID = 'gatehouse';
export const REDIRECT_URI = `${APP_ORIGIN}/callback`;
export const SCOPE = 'openid profile email offline_access';

const base64url = (bytes: Buffer) => bytes.toString('base64url');

export class CookieJar {
  readonly #cookies = new Map<string, string>();

  /** `headers` go with every request of this browser (e.g. a User-Agent in a test-controls scope). */
  constructor(readonly headers: Record<string, string> = {}) {}

  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  store(response: Response): void {
    for (const cookie of response.headers.getSetCookie()) {
      const [pair = '', ...attributes] = cookie.split(';');
      const at = pair.indexOf('=');
      const name = pair.slice(0, at).trim();
      const value = pair.slice(at + 1).trim();
      const expired = attributes.some((a) => /expires=Thu, 01 Jan 1970/i.test(a));
      if (expired || value === '') this.#cookies.delete(name);
      else this.#cookies.set(name, value);
    }
  }
}

/** One request as a browser would make it, minus redirects, which callers follow themselves. */
export async function request(jar: CookieJar, url: string | URL, init: RequestInit = {}): Promise<Response> {
  const headers = new Headers(init.headers);
  for (const [name, value] of Object.entries(jar.headers)) if (!headers.has(name)) headers.set(name, value);
  const cookies = jar.header();
  if (cookies) headers.set('Cookie', cookies);
  const response = await fetch(url, { ...init, headers, redirect: 'manual' });
  jar.store(response);
  return response;
}

export function form(values: Record<string, string>): RequestInit {
  return {
    method: 'POST',
    headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(values).toString(),
  };
}

export type Navigation = { kind: 'app'; url: URL } | { kind: 'page'; response: Response; url: URL };

/**
 * Follows redirects like a browser until it lands on a page or is sent to the app: a redirect to an
 * address `toApp` says is the app's (by default, anything on APP_ORIGIN) is not followed.
 */
export async function navigate(
  jar: CookieJar,
  url: string | URL,
  init?: RequestInit,
  toApp: (url: URL) => boolean = (next) => next.origin === APP_ORIGIN,
): Promise<Navigation> {
  let current = new URL(url);
  let response = await request(jar, current, init);
  for (let hops = 0; response.status >= 300 && response.status < 400; hops += 1) {
    if (hops > 10) throw new Error('too many redirects');
    const next = new URL(response.headers.get('Location') ?? '', current);
    if (toApp(next)) return { kind: 'app', url: next };
    current = next;
    response = await request(jar, current);
  }
  return { kind: 'page', response, url: current };
}

export interface AuthorizationRequest {
  url: URL;
  state: string;
  nonce: string;
  verifier: string;
}

export function authorizationRequest(
  issuer: string,
  overrides: Record<string, string | undefined> = {},
): AuthorizationRequest {
  const verifier = base64url(randomBytes(32));
  const state = base64url(randomBytes(12));
  const nonce = base64url(randomBytes(12));
  const params: Record<string, string | undefined> = {
    client_id: CLIENT_ID,
    response_type: 'code',
    redirect_uri: REDIRECT_URI,
    scope: SCOPE,
    state,
    nonce,
    code_challenge: base64url(createHash('sha256').update(verifier).digest()),
    code_challenge_method: 'S256',
    ...overrides,
  };
  const url = new URL('/auth', issuer);
  for (const [key, value] of Object.entries(params))
    if (value !== undefined) url.searchParams.set(key, value);
  return { url, state, nonce, verifier };
}

export function loginAction(html: string): string {
  const action = /action="(\/interaction\/[^"]+\/login)"/.exec(html)?.[1];
  if (!action) throw new Error(`no login form in page:\n${html}`);
  return action;
}

export interface SignedIn {
  jar: CookieJar;
  request: AuthorizationRequest;
  code: string;
}

/**
 * Logs in at the bundled provider's form as a browser would: from `start`, redirects followed to the
 * login page, the form posted, and redirects again until one is sent to the app (`toApp`, as in
 * `navigate`). The address the app was sent to, with the code or the error in its query.
 */
export async function logInAtForm(
  jar: CookieJar,
  start: URL,
  username: string,
  password: string,
  toApp?: (url: URL) => boolean,
): Promise<URL> {
  const loginPage = await navigate(jar, start, undefined, toApp);
  if (loginPage.kind !== 'page') throw new Error(`expected the login page, got ${loginPage.url.href}`);
  const action = new URL(loginAction(await loginPage.response.text()), loginPage.url);
  const back = await navigate(jar, action, form({ username, password }), toApp);
  if (back.kind !== 'app') throw new Error(`expected a redirect to the app, got page ${back.url.href}`);
  return back.url;
}

/** Runs the browser part of the flow: /auth -> login page -> POST credentials -> back to the app with a code. */
export async function signIn(
  issuer: string,
  username = 'alice',
  password = username,
  params: Record<string, string> = {},
  jar = new CookieJar(),
): Promise<SignedIn> {
  const auth = authorizationRequest(issuer, params);
  const back = await logInAtForm(jar, auth.url, username, password);
  const code = back.searchParams.get('code');
  if (!code || back.searchParams.get('state') !== auth.state) {
    throw new Error(`unexpected callback ${back.href}`);
  }
  return { jar, request: auth, code };
}

export interface TokenResponse {
  access_token: string;
  id_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
  scope: string;
}

/** POSTs to the token endpoint as the SPA does: a cross-origin request from the app's origin. */
export async function tokenRequest(
  issuer: string,
  params: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<Response> {
  const init = form({ client_id: CLIENT_ID, ...params });
  return fetch(new URL('/token', issuer), {
    ...init,
    headers: { ...(init.headers as Record<string, string>), Origin: APP_ORIGIN, ...headers },
  });
}

/** `headers` go with the token request, e.g. the User-Agent of a browser in a test-controls scope. */
export async function exchangeCode(
  issuer: string,
  signedIn: SignedIn,
  headers: Record<string, string> = {},
): Promise<TokenResponse> {
  const response = await tokenRequest(
    issuer,
    {
      grant_type: 'authorization_code',
      code: signedIn.code,
      redirect_uri: REDIRECT_URI,
      code_verifier: signedIn.request.verifier,
    },
    headers,
  );
  if (response.status !== 200)
    throw new Error(`token endpoint said ${response.status}: ${await response.text()}`);
  return (await response.json()) as TokenResponse;
}

export async function signInForTokens(
  issuer: string,
  username = 'alice',
  params: Record<string, string> = {},
): Promise<{ signedIn: SignedIn; tokens: TokenResponse }> {
  const signedIn = await signIn(issuer, username, username, params);
  return { signedIn, tokens: await exchangeCode(issuer, signedIn) };
}

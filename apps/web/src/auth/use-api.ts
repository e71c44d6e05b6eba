import type { ErrorBody, ErrorCode } from '@gatehouse/api-contract';
import { useCallback, useEffect, useState } from 'react';
import { useAuth } from './auth-context';
import type { ApiAnswer, ApiRequest } from './token-vault';

/** An answer of Gatehouse's API that was not 2xx, with the server's own reason when it gave one. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    /** The server's stable error code (listed in @gatehouse/api-contract), when it gave one. */
    readonly code: ErrorCode | undefined,
    message: string,
    /** The API refused the session even after a renewal: only signing in again helps. */
    readonly signInRequired = false,
    options?: ErrorOptions & { link?: string | undefined },
  ) {
    super(message, options);
    this.link = options?.link;
  }

  /** Where to go instead, as the server named it (an https address only). */
  readonly link: string | undefined;
}

/** A quoted parameter of a `WWW-Authenticate` challenge (RFC 6750, 3). */
function challengeParam(challenge: string | null, name: string): string | undefined {
  return challenge === null ? undefined : new RegExp(`${name}="([^"]*)"`).exec(challenge)?.[1];
}

/**
 * Turns a refusal into an ApiError that says why: the JSON body's `message` (the server's sentence),
 * else the bearer challenge's `error_description`, else the status alone.
 */
export async function toApiError(response: Response, signInRequired = false): Promise<ApiError> {
  let code: string | undefined;
  let reason: string | undefined;
  let link: string | undefined;
  try {
    const body = (await response.json()) as Partial<Record<keyof ErrorBody, unknown>>;
    if (typeof body.error === 'string') code = body.error;
    if (typeof body.link === 'string' && body.link.startsWith('https://')) link = body.link;
    if (typeof body.message === 'string' && body.message) reason = body.message;
  } catch {
    // Not JSON: the headers may still say why.
  }
  const challenge = response.headers.get('WWW-Authenticate');
  code ??= challengeParam(challenge, 'error');
  reason ??= challengeParam(challenge, 'error_description');
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  const said = reason
    ? `The server answered ${status}: ${reason.replace(/\.?$/, '.')}`
    : `The server answered ${status}.`;
  return new ApiError(
    response.status,
    // The server's codes are the contract's; a proxy's or the challenge's are passed on as they are.
    code as ErrorCode | undefined,
    signInRequired ? `${said} Sign in again to continue.` : said,
    signInRequired,
    { link },
  );
}

/** What an API call needs from the session (auth-context's `useAuth()` has it). */
export interface ApiAuthorization {
  /** Sends one request of the app's API with the session's authorization (the token vault adds it). */
  fetchApi: (request: ApiRequest) => Promise<ApiAnswer>;
  /** Renews the tokens now; true when a session remains to try again with. */
  renew: () => Promise<boolean>;
}

/** Statuses whose response has no body (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/** The vault's answer as a Response, so the page reads it as it would a fetch's. */
export function toResponse(answer: ApiAnswer): Response {
  return new Response(NULL_BODY.has(answer.status) ? null : answer.body, {
    status: answer.status,
    statusText: answer.statusText,
    headers: answer.headers,
  });
}

/**
 * One call of Gatehouse's API (same origin only): the session's authorization, the JSON answer, a
 * non-2xx answer as an ApiError. A 401 renews the token once and tries once more (RFC 6750, 3.1
 * `invalid_token`: an expired or revoked token); refused again, or not renewable, it asks the user to
 * sign in again. (The vault answers a DPoP `use_dpop_nonce` itself, RFC 9449 9.)
 */
export async function callApi<T>(
  path: `/api/${string}`,
  init: RequestInit,
  auth: ApiAuthorization,
): Promise<T> {
  const headers = new Headers(init.headers);
  headers.set('Accept', 'application/json');
  const body = init.body;
  if (body !== undefined && body !== null && typeof body !== 'string') {
    throw new TypeError('An API call sends its body as text (JSON).');
  }
  const request: ApiRequest = {
    url: new URL(path, window.location.origin).href,
    method: (init.method ?? 'GET').toUpperCase(),
    headers: [...headers],
    ...(typeof body === 'string' ? { body } : {}),
  };
  const send = async () => toResponse(await auth.fetchApi(request));
  let response = await send();
  if (response.status === 401) {
    const renewed = await auth.renew().catch(() => false);
    if (!renewed) throw await toApiError(response, true);
    response = await send();
    if (response.status === 401) throw await toApiError(response, true);
  }
  if (!response.ok) throw await toApiError(response);
  return (await response.json()) as T;
}

/** Fetch for Gatehouse's own API (callApi with the session). Tokens never go to any other origin. */
export function useApi() {
  const { fetchApi, renew } = useAuth();
  return useCallback(
    <T>(path: `/api/${string}`, init: RequestInit = {}): Promise<T> =>
      callApi<T>(path, init, { fetchApi, renew }),
    [fetchApi, renew],
  );
}
export type ApiQuery<T> =
  | { status: 'loading'; data?: undefined; error?: undefined }
  | { status: 'ready'; data: T; error?: undefined }
  | { status: 'failed'; data?: undefined; error: ApiError | Error };

/**
 * The API's GETs in flight, by session (its `fetchApi`, one per AuthProvider) and path: queries that
 * ask the same thing at once (two dashboard panels showing one endpoint, on the same refresh) share one
 * request and its answer. Only while it is in flight: the next refresh or a reload asks again.
 */
const inFlight = new WeakMap<object, Map<string, Promise<unknown>>>();

function sharedGet<T>(session: object, path: string, send: () => Promise<T>): Promise<T> {
  let paths = inFlight.get(session);
  if (!paths) inFlight.set(session, (paths = new Map<string, Promise<unknown>>()));
  const pending = paths.get(path) as Promise<T> | undefined;
  if (pending) return pending;
  const request = send();
  paths.set(path, request);
  const settled = () => {
    if (paths.get(path) === request) paths.delete(path);
  };
  request.then(settled, settled);
  return request;
}

/**
 * GET a path of the API and follow it: loading, then the data or the error. `refreshMs` fetches it
 * again on a timer (keeping the last data shown meanwhile); a new path starts over. Queries of the same
 * path at the same time share one request (sharedGet).
 */
export function useApiQuery<T>(
  path: `/api/${string}`,
  refreshMs?: number,
): ApiQuery<T> & { reload: () => void } {
  const { fetchApi } = useAuth();
  const api = useApi();
  const [state, setState] = useState<{ path: string; query: ApiQuery<T> }>({
    path,
    query: { status: 'loading' },
  });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let active = true;
    sharedGet(fetchApi, path, () => api<T>(path)).then(
      (data) => active && setState({ path, query: { status: 'ready', data } }),
      (error: unknown) =>
        active &&
        setState({
          path,
          query: { status: 'failed', error: error instanceof Error ? error : new Error(String(error)) },
        }),
    );
    return () => {
      active = false;
    };
  }, [api, fetchApi, path, generation]);

  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(() => setGeneration((n) => n + 1), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  const query: ApiQuery<T> = state.path === path ? state.query : { status: 'loading' };
  return { ...query, reload };
}

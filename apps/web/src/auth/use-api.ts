import { useCallback, useEffect, useState } from 'react';
import { useAuth } from './auth-context';

/** An answer of Gatehouse's API that was not 2xx, with the server's own reason when it gave one. */
export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    /** The server's stable error code (`invalid_token`, `forbidden`, …), when it gave one. */
    readonly code: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

/** A quoted parameter of a `WWW-Authenticate` challenge (RFC 6750, 3). */
function challengeParam(challenge: string | null, name: string): string | undefined {
  return challenge === null ? undefined : new RegExp(`${name}="([^"]*)"`).exec(challenge)?.[1];
}

/**
 * Turns a refusal into an ApiError that says why: the JSON body's `message` (the server's sentence),
 * else the bearer challenge's `error_description`, else the status alone.
 */
export async function toApiError(response: Response): Promise<ApiError> {
  let code: string | undefined;
  let reason: string | undefined;
  try {
    const body = (await response.json()) as { error?: unknown; message?: unknown };
    if (typeof body.error === 'string') code = body.error;
    if (typeof body.message === 'string' && body.message) reason = body.message;
  } catch {
    // Not JSON: the headers may still say why.
  }
  const challenge = response.headers.get('WWW-Authenticate');
  code ??= challengeParam(challenge, 'error');
  reason ??= challengeParam(challenge, 'error_description');
  const status = `${response.status}${response.statusText ? ` ${response.statusText}` : ''}`;
  return new ApiError(
    response.status,
    code,
    reason
      ? `The server answered ${status}: ${reason.replace(/\.?$/, '.')}`
      : `The server answered ${status}.`,
  );
}

/**
 * Fetch for Gatehouse's own API (same origin only): adds the bearer token, and turns a non-2xx
 * answer into an ApiError. Tokens never go to any other origin.
 */
export function useApi() {
  const { getAccessToken } = useAuth();
  return useCallback(
    async <T>(path: `/api/${string}`, init: RequestInit = {}): Promise<T> => {
      const token = await getAccessToken();
      const headers = new Headers(init.headers);
      if (token) headers.set('Authorization', `Bearer ${token}`);
      headers.set('Accept', 'application/json');
      const response = await fetch(path, { ...init, headers, credentials: 'same-origin' });
      if (!response.ok) throw await toApiError(response);
      return (await response.json()) as T;
    },
    [getAccessToken],
  );
}

export type ApiQuery<T> =
  | { status: 'loading'; data?: undefined; error?: undefined }
  | { status: 'ready'; data: T; error?: undefined }
  | { status: 'failed'; data?: undefined; error: ApiError | Error };

/**
 * GET a path of the API and follow it: loading, then the data or the error. `refreshMs` fetches it
 * again on a timer (keeping the last data shown meanwhile); a new path starts over.
 */
export function useApiQuery<T>(
  path: `/api/${string}`,
  refreshMs?: number,
): ApiQuery<T> & { reload: () => void } {
  const api = useApi();
  const [state, setState] = useState<{ path: string; query: ApiQuery<T> }>({
    path,
    query: { status: 'loading' },
  });
  const [generation, setGeneration] = useState(0);

  useEffect(() => {
    let active = true;
    api<T>(path).then(
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
  }, [api, path, generation]);

  useEffect(() => {
    if (!refreshMs) return;
    const timer = setInterval(() => setGeneration((n) => n + 1), refreshMs);
    return () => clearInterval(timer);
  }, [refreshMs]);

  const reload = useCallback(() => setGeneration((n) => n + 1), []);
  const query: ApiQuery<T> = state.path === path ? state.query : { status: 'loading' };
  return { ...query, reload };
}

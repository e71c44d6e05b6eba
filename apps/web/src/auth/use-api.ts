import { useCallback } from 'react';
import { useAuth } from './auth-context';

export class ApiError extends Error {
  override readonly name = 'ApiError';
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
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
      if (!response.ok) {
        throw new ApiError(response.status, `The server answered ${response.status} ${response.statusText}.`);
      }
      return (await response.json()) as T;
    },
    [getAccessToken],
  );
}

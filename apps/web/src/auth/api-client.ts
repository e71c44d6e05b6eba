/**
 * The typed client of Gatehouse's API: an endpoint is named by its method and path as the contract
 * (@gatehouse/api-contract) writes them (`'/usage/sessions/{id}/timeline'`), and its parameters and
 * answer take their types from there. Types only: none of the contract's schemas reach the bundle.
 */
import type { EndpointAt, Method, PathsOf, RequestOf, ResponseOf } from '@gatehouse/api-contract';
import { useCallback } from 'react';
import { useApi, useApiQuery, type ApiQuery } from './use-api';

/** What a GET of this path answers. */
export type AnswerOf<M extends Method, P extends PathsOf<M>> = ResponseOf<EndpointAt<M, P>>;
/** What a call of this path sends: its path parameters, query and body. */
export type RequestAt<M extends Method, P extends PathsOf<M>> = RequestOf<EndpointAt<M, P>>;

/** A request without path parameters or a body may leave its input out. */
type Input<M extends Method, P extends PathsOf<M>> =
  object extends RequestAt<M, P> ? [request?: RequestAt<M, P>] : [request: RequestAt<M, P>];

type QueryValue = string | number | boolean | readonly (string | number | boolean)[] | undefined;

/**
 * The URL of one call: path parameters filled in, the query in the order given, each value encoded
 * once (`%20` for a space, as the API's own links write it), a list as the key repeated, undefined left
 * out.
 */
interface UrlInput {
  params?: object | undefined;
  query?: object | undefined;
}

export function apiUrl(path: string, { params, query }: UrlInput = {}): `/api/${string}` {
  const values = (params ?? {}) as Record<string, string | number>;
  const filled = path.replace(/\{(\w+)\}/g, (_match, name: string) => {
    const value = values[name];
    if (value === undefined) throw new Error(`The path ${path} needs its ${name} parameter.`);
    return encodeURIComponent(String(value));
  });
  const pairs = Object.entries((query ?? {}) as Record<string, QueryValue>).flatMap(([key, value]) =>
    (Array.isArray(value) ? value : value === undefined ? [] : [value]).map(
      (item: string | number | boolean) => `${key}=${encodeURIComponent(String(item))}`,
    ),
  );
  return `/api${filled}${pairs.length > 0 ? `?${pairs.join('&')}` : ''}` as `/api/${string}`;
}

/**
 * GET an endpoint and follow it (useApiQuery): loading, then its answer, typed by the contract, or the
 * error. `refreshMs` asks again on a timer.
 */
export function useEndpoint<P extends PathsOf<'get'>>(
  path: P,
  ...input: [...Input<'get', P>, refreshMs?: number]
): ApiQuery<AnswerOf<'get', P>> & { reload: () => void } {
  const [request, refreshMs] = input as unknown as [UrlInput | undefined, number | undefined];
  return useApiQuery<AnswerOf<'get', P>>(apiUrl(path, request), refreshMs);
}

/** Calls of the API on demand (a button, an effect): `call('get', '/me')` answers the contract's type. */
export function useApiClient() {
  const api = useApi();
  return useCallback(
    <M extends Method, P extends PathsOf<M>>(
      method: M,
      path: P,
      ...input: Input<M, P>
    ): Promise<AnswerOf<M, P>> => {
      const [request] = input as [(UrlInput & { body?: unknown }) | undefined];
      const body = request?.body;
      return api<AnswerOf<M, P>>(apiUrl(path, request), {
        method: method.toUpperCase(),
        ...(body === undefined
          ? {}
          : { body: JSON.stringify(body), headers: { 'Content-Type': 'application/json' } }),
      });
    },
    [api],
  );
}

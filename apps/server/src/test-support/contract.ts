import {
  endpoints,
  errorBodySchema,
  type EndpointName,
  type ErrorBody,
  type ResponseOf,
} from '@gatehouse/api-contract';
import type { Express } from 'express';
import { z } from 'zod';

interface RouterLayer {
  rawPath?: unknown;
  route?: { path: string; methods: Record<string, boolean> };
  handle?: { stack?: RouterLayer[] };
}

/**
 * Every route under `/api` as Express holds it (`get /usage/sessions/{id}/timeline`), sub-routers
 * included, in OpenAPI's path syntax: what the API really answers, to hold against its description.
 */
export function apiRoutes(app: Express): string[] {
  const root = (app as unknown as { router: { stack: RouterLayer[] } }).router.stack;
  const api = root.find((layer) => layer.rawPath === '/api' && layer.handle?.stack);
  if (!api?.handle?.stack) throw new Error('The app has no /api router.');
  return walk(api.handle.stack, '');
}

function walk(stack: RouterLayer[], prefix: string): string[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const path = `${prefix}${layer.route.path}`.replace(/:(\w+)/g, '{$1}');
      return Object.keys(layer.route.methods)
        .filter((method) => method !== '_all')
        .map((method) => `${method} ${path}`);
    }
    if (layer.handle?.stack && typeof layer.rawPath === 'string')
      return walk(layer.handle.stack, layer.rawPath === '/' ? prefix : `${prefix}${layer.rawPath}`);
    return [];
  });
}

/**
 * The body as the endpoint's description says it must be (unknown keys refused), or an exception that
 * names each difference: the server's answers checked against the contract the SPA was built on.
 */
export function asDescribed<N extends EndpointName>(name: N, body: unknown): ResponseOf<N> {
  const schema = endpoints[name].response;
  if (!(schema instanceof z.ZodType)) throw new Error(`${name} does not answer JSON.`);
  return schema.parse(body) as ResponseOf<N>;
}

/** An error answer: the one shape, with a code from the contract's list. */
export function asErrorBody(body: unknown): ErrorBody {
  return errorBodySchema.parse(body);
}

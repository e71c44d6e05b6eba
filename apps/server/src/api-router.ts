import {
  accessLevels,
  errorBody,
  issuesSentence,
  mayAccess,
  type BodyOf,
  type Contract,
  type Endpoint,
  type Endpoints,
  type ParamsOf,
  type QueryOf,
  type ResponseOf,
} from '@gatehouse/api-contract';
import { LogAnalyticsError, NotAvailableError } from '@gatehouse/collector';
import express, { type NextFunction, type Request, type Response } from 'express';
import { z } from 'zod';
import { requireAccessToken, type ApiUser, type DpopPolicy, type RefusalCounter } from './auth/bearer.js';

/** Who is calling: the verified user and their access token; null on a public endpoint. */
export type Caller<N extends keyof C, C extends Contract = Endpoints> = C[N] extends { access: 'public' }
  ? null
  : { user: ApiUser; accessToken: string };

/** What a handler receives: the request's input as its endpoint describes it, validated, and the caller. */
export interface Call<N extends keyof C, C extends Contract = Endpoints> {
  params: ParamsOf<N, C>;
  query: QueryOf<N, C>;
  body: BodyOf<N, C>;
  caller: Caller<N, C>;
}

/**
 * One endpoint's implementation. A JSON endpoint returns its answer (typed by the contract), or null for
 * a 404 with the endpoint's own 404 sentence; an endpoint of another media type (a stream) writes it to
 * `res` itself.
 */
export type Handler<N extends keyof C, C extends Contract = Endpoints> = C[N] extends {
  response: z.ZodType;
}
  ? (call: Call<N, C>) => Promise<ResponseOf<N, C> | null> | ResponseOf<N, C> | null
  : (call: Call<N, C>, res: Response) => Promise<void> | void;

/**
 * Every endpoint of the contract, each with its handler, or null where this configuration does not
 * serve it (no telemetry store: no usage dashboard); a null endpoint answers like an unknown path (404).
 * The type asks for every endpoint, and createApiRouter checks it again at start.
 */
export type ApiHandlers<C extends Contract = Endpoints> = { [N in keyof C]: Handler<N, C> | null };

export interface ApiRouterOptions {
  verify: (token: string) => Promise<ApiUser>;
  /** How DPoP-bound tokens are checked (RFC 9449); without it, only bearer tokens are taken. */
  dpop?: DpopPolicy | undefined;
  /** Counts each refusal by reason (the refusal metric); default: not counted. */
  refusals?: RefusalCounter | undefined;
}

/** One message naming every bad parameter: "range must be one of …; limit must be …". */
export function describeIssues(error: z.ZodError): string {
  return issuesSentence(error.issues, { whole: 'the request', unknownKey: 'a parameter of this endpoint' });
}

class BadRequest extends Error {}

function parse(schema: z.ZodType | undefined, value: unknown, fallback: unknown): unknown {
  if (!schema) return fallback;
  const result = schema.safeParse(value);
  if (!result.success) throw new BadRequest(describeIssues(result.error));
  return result.data;
}

/**
 * What the telemetry source's own failures answer: 501 for a panel it cannot answer (with its portal
 * view), 503 with Retry-After when it could not answer now. False for anything else.
 */
function sourceFailure(error: unknown, res: Response): boolean {
  if (error instanceof NotAvailableError) {
    res.status(501).json(errorBody('not_available', error.message, error.portalView));
    return true;
  }
  if (error instanceof LogAnalyticsError) {
    res.status(503).set('Retry-After', '30').json(errorBody('source_unavailable', error.message));
    return true;
  }
  return false;
}

/** `/usage/sessions/{id}` (OpenAPI) as Express's `/usage/sessions/:id`. */
export function toExpressPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ':$1');
}

/**
 * The one way an endpoint of /api is served, for every endpoint of the contract: the caller's token
 * checked where the endpoint's `access` keeps signed-out callers out, and the verified caller let in or
 * refused (403) as mayAccess says (requireAccessToken), then its path
 * parameters, query and body validated by its schemas (a 400 names each bad one), then its handler. A
 * JSON answer is sent as is; null is the endpoint's 404; the source's failures are 501/503; anything
 * else goes to the app's error handler. Throws at start when the handlers and the contract disagree: an
 * endpoint without a handler, or a handler for an endpoint the contract does not have.
 */
export function createApiRouter<C extends Contract>(
  contract: C,
  handlers: ApiHandlers<C>,
  { verify, dpop, refusals }: ApiRouterOptions,
): express.Router {
  const missing = Object.keys(contract).filter((name) => !Object.hasOwn(handlers, name));
  const unknown = Object.keys(handlers).filter((name) => !Object.hasOwn(contract, name));
  if (missing.length > 0 || unknown.length > 0) {
    throw new Error(
      [
        missing.length > 0 && `Endpoints of the contract without a handler: ${missing.join(', ')}.`,
        unknown.length > 0 && `Handlers for endpoints the contract does not have: ${unknown.join(', ')}.`,
      ]
        .filter(Boolean)
        .join(' '),
    );
  }
  // A token is asked for only where a signed-out caller may not go; the verified one meets mayAccess again.
  const guards = new Map(
    accessLevels.map((access) => [
      access,
      mayAccess(access, null) ? undefined : requireAccessToken(verify, { access, dpop, refusals }),
    ]),
  );
  const router = express.Router();
  for (const [name, endpoint] of Object.entries(contract) as [keyof C & string, Endpoint][]) {
    // One endpoint's handler, whichever kind: the table's type tied it to this endpoint already.
    const handler = handlers[name] as ((call: Call<keyof C, C>, res: Response) => unknown) | null;
    if (handler === null) continue;
    const json = endpoint.response instanceof z.ZodType;
    const guard = guards.get(endpoint.access);
    const serve = async (req: Request, res: Response, next: NextFunction) => {
      try {
        const call = {
          params: parse(endpoint.params, req.params, {}),
          query: parse(endpoint.query, req.query, {}),
          body: parse(endpoint.body, req.body, undefined),
          // No guard, no caller: the endpoint is open to the signed-out (Caller's type says null for public).
          caller: guard
            ? { user: res.locals.user as ApiUser, accessToken: res.locals.accessToken as string }
            : null,
        } as Call<keyof C, C>;
        const answer = await handler(call, res);
        if (!json) return;
        if (answer === null) {
          const notFound = endpoint.errors?.[404] ?? 'Nothing is stored for it';
          res.status(404).json(errorBody('not_found', `${notFound}.`));
          return;
        }
        res.json(answer);
      } catch (error) {
        if (res.headersSent) return next(error);
        if (error instanceof BadRequest) {
          res.status(400).json(errorBody('invalid_request', error.message));
          return;
        }
        if (sourceFailure(error, res)) return;
        next(error);
      }
    };
    router[endpoint.method](toExpressPath(endpoint.path), ...(guard ? [guard, serve] : [serve]));
  }
  return router;
}

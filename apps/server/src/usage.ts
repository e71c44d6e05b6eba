import { once } from 'node:events';
import {
  endpoints,
  errorBody,
  type Endpoint,
  type EndpointName,
  type ParamsOf,
  type QueryOf,
  type ResponseOf,
  type UsageRange,
} from '@gatehouse/api-contract';
import {
  LogAnalyticsError,
  NotAvailableError,
  type AnalyticsQueries,
  type Freshness,
  type UsageQueries,
} from '@gatehouse/collector';
import express, { type NextFunction, type Request, type Response } from 'express';
import type { z } from 'zod';
import { requireAccessToken, type ApiUser, type DpopPolicy } from './auth/bearer.js';

/** Which store the dashboard's figures come from; the overview says so (and how fresh it is). */
export type UsageSource = { kind: 'local' } | { kind: 'log-analytics'; freshness: () => Promise<Freshness> };

export interface UsageRouterOptions {
  /** Where the figures come from. Default: the local store. */
  source?: UsageSource | undefined;
  verify: (token: string) => Promise<ApiUser>;
  queries: UsageQueries;
  /** The product analytics (web vitals, ...); without them those endpoints answer 404. */
  analytics?: AnalyticsQueries | undefined;
  /** Whether this server issued a telemetry user id (telemetry-user-id.ts); else nothing counts as verified. */
  isVerifiedUser?: (id: string | null) => boolean;
  /** How DPoP-bound tokens are checked (RFC 9449); without it, only bearer tokens are taken. */
  dpop?: DpopPolicy | undefined;
}

/** One message naming every bad parameter: "range must be one of …; limit must be …". */
export function describeIssues(error: z.ZodError): string {
  const parts = error.issues.flatMap((issue) => {
    if (issue.code === 'unrecognized_keys')
      return issue.keys.map((key) => `${key} is not a parameter of this endpoint`);
    const name = issue.path.map(String).join('.') || 'the request';
    return [`${name} ${issue.message}`];
  });
  return `${[...new Set(parts)].join('; ')}.`;
}

class BadRequest extends Error {}

/**
 * What the source's own failures answer: 501 for a panel it cannot answer (with its portal view), 503
 * with Retry-After when it could not answer now. Undefined for anything else.
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

function parse<T>(schema: z.ZodType<T>, value: unknown): T {
  const result = schema.safeParse(value);
  if (!result.success) throw new BadRequest(describeIssues(result.error));
  return result.data;
}

type Usage = {
  [N in EndpointName]: N extends `usage${string}` ? N : never;
}[EndpointName];

/** The request's path parameters and query, as the endpoint describes them; a BadRequest otherwise. */
function input<N extends Usage>(name: N, req: Request): { params: ParamsOf<N>; query: QueryOf<N> } {
  const endpoint = endpoints[name] as { params?: z.ZodType; query?: z.ZodType };
  return {
    params: (endpoint.params ? parse(endpoint.params, req.params) : {}) as ParamsOf<N>,
    query: (endpoint.query ? parse(endpoint.query, req.query) : {}) as QueryOf<N>,
  };
}

/**
 * The route of one endpoint of the contract: JSON, never cached; a BadRequest becomes 400 with its
 * message, null a 404, anything else goes to the app's error handler.
 */
function route<N extends Usage>(
  router: express.Router,
  name: N,
  handler: (input: { params: ParamsOf<N>; query: QueryOf<N> }) => Promise<ResponseOf<N> | null>,
) {
  const { method, path } = endpoints[name];
  router[method](toExpressPath(path), async (req: Request, res: Response, next: NextFunction) => {
    res.set('Cache-Control', 'no-store');
    try {
      const body = await handler(input(name, req));
      if (body === null) {
        const notFound: string | undefined = (endpoints[name] as Endpoint).errors?.[404];
        res.status(404).json(errorBody('not_found', `${notFound ?? 'Nothing is stored for it'}.`));
        return;
      }
      res.json(body);
    } catch (error) {
      if (error instanceof BadRequest) {
        res.status(400).json(errorBody('invalid_request', error.message));
        return;
      }
      if (sourceFailure(error, res)) return;
      next(error);
    }
  });
}

/** `/usage/sessions/{id}` (OpenAPI) as the usage router's `/sessions/:id`. */
function toExpressPath(path: string): string {
  return path.replace(/^\/usage/, '').replace(/\{(\w+)\}/g, ':$1');
}

/**
 * The usage API (`/api/usage/...`) for the admin dashboard: admins only (the `admin` role, read from the
 * configured roles claim), every input validated against the endpoint's description in
 * @gatehouse/api-contract.
 */
export function createUsageRouter({
  verify,
  queries,
  analytics,
  isVerifiedUser = () => false,
  dpop,
  source = { kind: 'local' },
}: UsageRouterOptions): express.Router {
  const router = express.Router();
  router.use(requireAccessToken(verify, { role: 'admin', dpop }));
  /** Signed-in users whose id this server issued: a forged `authUserId` is not among them. */
  const verifiedCount = async (options: { range: UsageRange; now: number }) =>
    (await queries.signedInUserIds(options)).filter(isVerifiedUser).length;
  /** The source, and for Log Analytics how fresh it is (a failure there leaves the figures standing). */
  const describeSource = async () => {
    if (source.kind === 'local') return { kind: source.kind };
    const freshness = await source.freshness().catch(() => ({ latestItem: null, ingestionDelayMs: null }));
    return { kind: source.kind, ...freshness };
  };
  route(router, 'usageOverview', async ({ query }) => {
    const [overview, sourceInfo] = await Promise.all([queries.overview(query), describeSource()]);
    const [value, previous] = await Promise.all([
      verifiedCount({ ...query, now: Date.parse(overview.to) }),
      verifiedCount({ ...query, now: Date.parse(overview.from) }),
    ]);
    const change = previous === 0 ? null : (value - previous) / previous;
    return {
      ...overview,
      source: sourceInfo,
      tiles: { ...overview.tiles, verifiedUsers: { value, previous, change } },
      storeFull: overview.storeFull ?? null,
    };
  });
  route(router, 'usageTimeseries', ({ query }) => queries.timeseries(query));
  route(router, 'usagePages', ({ query }) => queries.pages(query));
  route(router, 'usageExceptions', ({ query }) => queries.exceptions(query));
  route(router, 'usageDependencies', ({ query }) => queries.dependencies(query));
  route(router, 'usageSessions', async ({ query: { limit, ...options } }) => {
    const answer = await queries.sessions(limit === undefined ? options : { ...options, limit });
    return {
      ...answer,
      sessions: answer.sessions.map((s) => ({ ...s, verified: s.authenticated && isVerifiedUser(s.user) })),
    };
  });
  // One user's items, for access and erasure requests (README: "Access and erasure requests"). Streamed:
  // not JSON, so not through route().
  const { path: exportPath } = endpoints.usageUserExport;
  router.get(toExpressPath(exportPath), async (req, res, next) => {
    res.set('Cache-Control', 'no-store');
    let user: string;
    try {
      ({ id: user } = input('usageUserExport', req).params);
    } catch (error) {
      if (error instanceof BadRequest)
        return void res.status(400).json(errorBody('invalid_request', error.message));
      return next(error);
    }
    let items: AsyncIterable<unknown>;
    try {
      items = queries.userItems(user);
    } catch (error) {
      if (sourceFailure(error, res)) return;
      return next(error);
    }
    res.attachment(`telemetry-${user.replace(/[^\w.-]/g, '_')}.ndjson`);
    res.type('application/x-ndjson'); // (after attachment, which would type it by the file name)
    try {
      let chunk = '';
      for await (const envelope of items) {
        chunk += `${JSON.stringify(envelope)}\n`;
        // In chunks of about 64 KB, waiting when the client reads slower than the store yields.
        if (chunk.length > 65_536) {
          if (!res.write(chunk)) await once(res, 'drain');
          chunk = '';
        }
      }
      res.end(chunk);
    } catch (error) {
      if (!res.headersSent) return next(error);
      res.destroy(error as Error); // The client sees a cut answer, never a partial one that looks whole.
    }
  });
  route(router, 'usageUserErase', async ({ params: { id } }) => ({ erased: await queries.eraseUser(id) }));
  route(router, 'usageSessionTimeline', async ({ params: { id } }) => {
    const timeline = await queries.sessionTimeline(id);
    return timeline && { ...timeline, verified: timeline.authenticated && isVerifiedUser(timeline.user) };
  });
  if (analytics) {
    route(router, 'usageExperience', ({ query }) => analytics.experience(query));
    route(router, 'usageEvents', ({ query }) => analytics.customEvents(query));
    route(router, 'usageFunnel', ({ query: { step, ...options } }) => analytics.funnel(step, options));
    route(router, 'usageRetention', ({ query: { unit, ...options } }) => analytics.retention(unit, options));
    route(router, 'usageFlows', ({ query: { page, ...options } }) => analytics.userFlows(page, options));
  }
  return router;
}

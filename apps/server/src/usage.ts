import { once } from 'node:events';
import {
  SESSION_ID,
  SESSIONS_LIMIT,
  USER_ID,
  usageRanges,
  type AnalyticsQueries,
  type UsageQueries,
  type UsageRange,
} from '@gatehouse/collector';
import express from 'express';
import { z } from 'zod';
import { analyticsRoutes } from './analytics.js';
import { answer, BadRequest, parse, range, rangeQuery } from './api-answer.js';
import { requireBearer, type ApiUser } from './auth/bearer.js';

/** The collector's: what its queries accept. */
export const RANGES = usageRanges;
export const SESSIONS_LIMIT_MAX = SESSIONS_LIMIT.max;
export const SESSION_ID_PATTERN = SESSION_ID.source;

export interface UsageRouterOptions {
  verify: (token: string) => Promise<ApiUser>;
  queries: UsageQueries;
  /** The product analytics (analytics.ts); without them those endpoints answer 404. */
  analytics?: AnalyticsQueries | undefined;
  /** Whether this server issued a telemetry user id (telemetry-user-id.ts); else nothing counts as verified. */
  isVerifiedUser?: (id: string | null) => boolean;
}

const sessionsQuery = z.strictObject({
  range,
  limit: z
    .string({ error: 'must be a whole number' })
    .regex(/^\d{1,4}$/, 'must be a whole number')
    .transform(Number)
    .pipe(
      z
        .number()
        .min(1, 'must be at least 1')
        .max(SESSIONS_LIMIT_MAX, `must be at most ${SESSIONS_LIMIT_MAX}`),
    )
    .optional(),
});
const sessionParams = z.object({
  id: z.string().regex(SESSION_ID, 'must be a session id (1–128 of A–Z a–z 0–9 + / = _ . : -)'),
});
const userParams = z.object({
  id: z.string().regex(USER_ID, 'must be a user id (1–128 of A–Z a–z 0–9 + / = _ . : -)'),
});

/**
 * The usage API (`/api/usage/...`) for the admin dashboard: admins only (the `admin` role, read from the
 * configured roles claim), every input validated. Described in openapi.ts.
 */
export function createUsageRouter({
  verify,
  queries,
  analytics,
  isVerifiedUser = () => false,
}: UsageRouterOptions): express.Router {
  const router = express.Router();
  router.use(requireBearer(verify, 'admin'));
  /** Signed-in users whose id this server issued: a forged `authUserId` is not among them. */
  const verifiedCount = async (options: { range: UsageRange; now: number }) =>
    (await queries.signedInUserIds(options)).filter(isVerifiedUser).length;
  router.get(
    '/overview',
    answer(async (req) => {
      const { range } = parse(rangeQuery, req.query);
      const overview = await queries.overview({ range });
      const [value, previous] = await Promise.all([
        verifiedCount({ range, now: Date.parse(overview.to) }),
        verifiedCount({ range, now: Date.parse(overview.from) }),
      ]);
      const change = previous === 0 ? null : (value - previous) / previous;
      return { ...overview, tiles: { ...overview.tiles, verifiedUsers: { value, previous, change } } };
    }),
  );
  router.get(
    '/timeseries',
    answer((req) => queries.timeseries(parse(rangeQuery, req.query))),
  );
  router.get(
    '/pages',
    answer((req) => queries.pages(parse(rangeQuery, req.query))),
  );
  router.get(
    '/exceptions',
    answer((req) => queries.exceptions(parse(rangeQuery, req.query))),
  );
  router.get(
    '/dependencies',
    answer((req) => queries.dependencies(parse(rangeQuery, req.query))),
  );
  router.get(
    '/sessions',
    answer(async (req) => {
      const { range, limit } = parse(sessionsQuery, req.query);
      const answer = await queries.sessions(limit === undefined ? { range } : { range, limit });
      return {
        ...answer,
        sessions: answer.sessions.map((s) => ({ ...s, verified: s.authenticated && isVerifiedUser(s.user) })),
      };
    }),
  );
  // One user's items, for access and erasure requests (README: "Access and erasure requests").
  router.get('/users/:id/export', async (req, res, next) => {
    res.set('Cache-Control', 'no-store');
    let user: string;
    try {
      ({ id: user } = parse(userParams, req.params));
      parse(z.strictObject({}), req.query);
    } catch (error) {
      if (error instanceof BadRequest)
        return void res.status(400).json({ error: 'invalid_request', message: error.message });
      return next(error);
    }
    res.attachment(`telemetry-${user.replace(/[^\w.-]/g, '_')}.ndjson`);
    res.type('application/x-ndjson'); // (after attachment, which would type it by the file name)
    try {
      let chunk = '';
      for await (const envelope of queries.userItems(user)) {
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
  router.delete(
    '/users/:id',
    answer(async (req) => {
      const { id } = parse(userParams, req.params);
      parse(z.strictObject({}), req.query);
      return { erased: await queries.eraseUser(id) };
    }),
  );
  router.get(
    '/sessions/:id/timeline',
    answer(async (req) => {
      const { id } = parse(sessionParams, req.params);
      parse(z.strictObject({}), req.query);
      const timeline = await queries.sessionTimeline(id);
      return timeline && { ...timeline, verified: timeline.authenticated && isVerifiedUser(timeline.user) };
    }),
  );
  if (analytics) analyticsRoutes(router, analytics);
  return router;
}

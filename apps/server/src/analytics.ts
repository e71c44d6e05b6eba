import type { AnalyticsQueries } from '@gatehouse/collector';
import type express from 'express';
import { answer, parse, rangeQuery } from './api-answer.js';

/**
 * The dashboard's product-analytics endpoints, on the usage router (admins only, as every /usage
 * endpoint). Described in openapi.ts. Kept apart from usage.ts so they move as one piece to the API
 * contract package when it exists.
 */
export function analyticsRoutes(router: express.Router, analytics: AnalyticsQueries): void {
  router.get(
    '/experience',
    answer((req) => analytics.experience(parse(rangeQuery, req.query))),
  );
}

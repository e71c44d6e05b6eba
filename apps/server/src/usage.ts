import { once } from 'node:events';
import { endpoints } from '@gatehouse/api-contract';
import {
  annotationExportLine,
  dashboardQueries,
  type Freshness,
  type StoredAnnotation,
  type UsageOptions,
  type UsageQueries,
} from '@gatehouse/collector';
import type { ApiHandlers } from './api-router.js';

/** Which store the dashboard's figures come from; the overview says so (and how fresh it is). */
export type UsageSource = { kind: 'local' } | { kind: 'log-analytics'; freshness: () => Promise<Freshness> };

export interface UsageHandlersOptions {
  /** Where the figures come from. Default: the local store. */
  source?: UsageSource | undefined;
  queries: UsageQueries;
  /** Whether this server issued a telemetry user id (telemetry-user-id.ts); else nothing counts as verified. */
  isVerifiedUser?: (id: string | null) => boolean;
  /** The annotations one user wrote: their own data, in their export (docs/annotations.md). */
  authoredAnnotations?: ((user: string) => Promise<StoredAnnotation[]>) | undefined;
}

/** The usage endpoints answered here: not the panels' (dashboard.ts answers those from their registry). */
type UsageName = Exclude<
  { [N in keyof ApiHandlers]: N extends `usage${string}` ? N : never }[keyof ApiHandlers],
  keyof typeof dashboardQueries
>;
const isUsageName = (name: string): name is UsageName =>
  name.startsWith('usage') && !Object.hasOwn(dashboardQueries, name);

/**
 * The usage API (`/api/usage/...`) for the admin dashboard: the handlers of the contract's `usage*`
 * endpoints (admins only and validated input, as api-router.ts serves every endpoint).
 */
export function usageHandlers(options: UsageHandlersOptions | undefined): Pick<ApiHandlers, UsageName> {
  if (!options) {
    // No telemetry store to ask: the dashboard's endpoints answer like unknown paths.
    const names = Object.keys(endpoints).filter(isUsageName);
    return Object.fromEntries(names.map((name) => [name, null])) as Record<UsageName, null>;
  }
  const { queries, isVerifiedUser = () => false, source = { kind: 'local' } } = options;
  const { authoredAnnotations } = options;
  /** Signed-in users whose id this server issued: a forged `authUserId` is not among them. */
  const verifiedCount = async (options: UsageOptions) =>
    (await queries.signedInUserIds(options)).filter(isVerifiedUser).length;
  /** The source, and for Log Analytics how fresh it is (a failure there leaves the figures standing). */
  const describeSource = async () => {
    if (source.kind === 'local') return { kind: source.kind };
    const freshness = await source.freshness().catch(() => ({ latestItem: null, ingestionDelayMs: null }));
    return { kind: source.kind, ...freshness };
  };
  return {
    usageOverview: async ({ query }) => {
      const [overview, sourceInfo] = await Promise.all([queries.overview(query), describeSource()]);
      // The overview's own periods: a range's ends at its `to`; a custom one is given by its bounds.
      const [value, previous] = await Promise.all([
        verifiedCount(query.from ? query : { ...query, now: Date.parse(overview.to) }),
        verifiedCount(
          query.from
            ? { ...query, from: overview.previousFrom, to: overview.from }
            : { ...query, now: Date.parse(overview.from) },
        ),
      ]);
      const change = previous === 0 ? null : (value - previous) / previous;
      return {
        ...overview,
        source: sourceInfo,
        tiles: { ...overview.tiles, verifiedUsers: { value, previous, change } },
        storeFull: overview.storeFull ?? null,
      };
    },
    usageSessions: async ({ query: { limit, ...options } }) => {
      const answer = await queries.sessions(limit === undefined ? options : { ...options, limit });
      return {
        ...answer,
        sessions: answer.sessions.map((s) => ({ ...s, verified: s.authenticated && isVerifiedUser(s.user) })),
      };
    },
    usageSessionTimeline: async ({ params: { id } }) => {
      const timeline = await queries.sessionTimeline(id);
      return timeline && { ...timeline, verified: timeline.authenticated && isVerifiedUser(timeline.user) };
    },
    // One user's items, for access and erasure requests (docs/telemetry.md: "Access and erasure requests"). Streamed
    // as NDJSON: a failure before the first byte is an answer of its own (the router's), after it a cut.
    usageUserExport: async ({ params: { id: user } }, res) => {
      const items = queries.userItems(user);
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
        // Then the annotations they wrote (their own data; others' never), a line each.
        for (const annotation of (await authoredAnnotations?.(user)) ?? [])
          chunk += annotationExportLine(annotation);
        res.end(chunk);
      } catch (error) {
        if (!res.headersSent) throw error;
        res.destroy(error as Error); // The client sees a cut answer, never a partial one that looks whole.
      }
    },
    usageUserErase: async ({ params: { id } }) => ({ erased: await queries.eraseUser(id) }),
  };
}

import type { Contract } from '@gatehouse/api-contract';
import type { DashboardQueries, DashboardRunner } from '@gatehouse/collector';
import type { ApiHandlers } from './api-router.js';

/**
 * The dashboard panels' endpoints, each answered by its registered query (the collector's
 * dashboard/dashboard-queries.ts, ADR 0102) on whichever back-end this server reads: its own store, the
 * store holder, or Log Analytics. Without one (no telemetry store), each answers like an unknown path.
 * Nothing to write here for a new panel: its registry entry is its handler.
 */
export function dashboardHandlers<C extends Contract, R extends DashboardQueries>(
  _contract: C,
  registry: R,
  dashboard: DashboardRunner<R> | undefined,
): Pick<ApiHandlers<C>, keyof R & keyof C> {
  const handler = (name: keyof R & string) =>
    dashboard ? ({ query }: { query: unknown }) => dashboard(name, query as never) : null;
  return Object.fromEntries(Object.keys(registry).map((name) => [name, handler(name)])) as never;
}

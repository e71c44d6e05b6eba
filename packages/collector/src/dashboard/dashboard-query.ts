import type { Contract, Endpoints, QueryOf, ResponseOf } from '@gatehouse/api-contract';
import type { UsageReader } from '../analytics/sql.js';
import { NotAvailableError } from '../log-analytics/kql.js';
import { portal, type PortalLinks, type RunQuery } from '../log-analytics/log-analytics-queries.js';
import { ownValue } from '../own-property.js';

/**
 * What a question the Log Analytics tables cannot answer honestly says instead (a 501 for the panel):
 * the sentence, and the Azure portal's own view of it (the resource's blade), which the panel links to.
 */
export interface NotAvailable {
  notAvailable: string;
  portalBlade: string;
}

/**
 * One dashboard query, registered once (dashboard-queries.ts) under the name of the contract's endpoint
 * it answers: its question over the collector's own store (DuckDB) and over a Log Analytics workspace
 * (KQL), or why the workspace cannot answer it. The store holder's forwarding, the server's handler and
 * the Log Analytics back-end are all derived from this entry (ADR 0102).
 */
export interface DashboardQuery<N extends keyof C, C extends Contract = Endpoints> {
  store(reader: UsageReader, query: QueryOf<N, C>): Promise<ResponseOf<N, C>>;
  logAnalytics: ((run: RunQuery, query: QueryOf<N, C>) => Promise<ResponseOf<N, C>>) | NotAvailable;
}

/** Any registered query, whatever its endpoint (what the runners need of it). */
export interface AnyDashboardQuery {
  store(reader: UsageReader, query: never): Promise<unknown>;
  logAnalytics: ((run: RunQuery, query: never) => Promise<unknown>) | NotAvailable;
}

/** A registry: endpoint name → its query. */
export type DashboardQueries = Record<string, AnyDashboardQuery>;

type Signature<R, N extends keyof R> = R[N] extends {
  store(reader: UsageReader, query: infer Q): Promise<infer A>;
}
  ? { query: Q; answer: A }
  : never;
/** The query of endpoint `N` of registry `R`, once validated by the contract. */
export type DashboardQueryOf<R, N extends keyof R> = Signature<R, N>['query'];
/** Its answer. */
export type DashboardAnswerOf<R, N extends keyof R> = Signature<R, N>['answer'];

/**
 * Runs the registered queries on one back-end: the local store, a Log Analytics workspace, or the store
 * holder another replica reaches over the internal API (replicas/store-holder-client.ts).
 */
export type DashboardRunner<R> = <N extends keyof R & string>(
  name: N,
  query: DashboardQueryOf<R, N>,
) => Promise<DashboardAnswerOf<R, N>>;

function entry<R extends DashboardQueries>(queries: R, name: string): AnyDashboardQuery {
  const query = ownValue(queries, name);
  if (!query) throw new RangeError(`There is no dashboard query named ${name}.`);
  return query;
}

/** The registered queries over the collector's own store. */
export function runOnStore<R extends DashboardQueries>(queries: R, reader: UsageReader): DashboardRunner<R> {
  return (name, query) => entry(queries, name).store(reader, query as never);
}

/**
 * The registered queries over a Log Analytics workspace: each query's KQL form, or a NotAvailableError
 * (501) with a link to the portal's view where it has none.
 */
export function runOnLogAnalytics<R extends DashboardQueries>(
  queries: R,
  run: RunQuery,
  links: PortalLinks = {},
): DashboardRunner<R> {
  return (name, query) => {
    const { logAnalytics } = entry(queries, name);
    if (typeof logAnalytics === 'function') return logAnalytics(run, query as never);
    return Promise.reject(
      new NotAvailableError(logAnalytics.notAvailable, portal(links, logAnalytics.portalBlade)),
    );
  };
}

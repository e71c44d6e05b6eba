import type { EndpointName } from '@gatehouse/api-contract';
import { queryBreakdowns } from '../analytics/breakdowns.js';
import { queryCustomEvents } from '../analytics/events.js';
import { queryExperience } from '../analytics/experience.js';
import { queryUserFlows } from '../analytics/flows.js';
import { queryFunnel } from '../analytics/funnel.js';
import { queryRetention } from '../analytics/retention.js';
import { createUsageQueries } from '../analytics/usage.js';
import {
  breakdownsOnLogAnalytics,
  customEventsOnLogAnalytics,
  dependenciesOnLogAnalytics,
  exceptionsOnLogAnalytics,
  experienceOnLogAnalytics,
  pagesOnLogAnalytics,
  timeseriesOnLogAnalytics,
} from '../log-analytics/log-analytics-queries.js';
import type { DashboardQuery, DashboardRunner } from './dashboard-query.js';
import { signInHealth } from './sign-in-health.js';

/**
 * Every query behind a dashboard panel, once, keyed by the contract endpoint it answers (ADR 0102). The
 * server serves each endpoint from here, the store holder answers the other replicas from here, and the
 * Log Analytics back-end runs each entry's KQL form. To add one: its endpoint in the contract, its file
 * (the DuckDB and KQL forms, or why the workspace cannot answer), and its line below (README: "Add a
 * dashboard panel").
 */
export const dashboardQueries = {
  usageTimeseries: {
    store: (reader, query) => createUsageQueries(reader).timeseries(query),
    logAnalytics: timeseriesOnLogAnalytics,
  },
  usagePages: {
    store: (reader, query) => createUsageQueries(reader).pages(query),
    logAnalytics: pagesOnLogAnalytics,
  },
  usageExceptions: {
    store: (reader, query) => createUsageQueries(reader).exceptions(query),
    logAnalytics: exceptionsOnLogAnalytics,
  },
  usageDependencies: {
    store: (reader, query) => createUsageQueries(reader).dependencies(query),
    logAnalytics: dependenciesOnLogAnalytics,
  },
  usageExperience: { store: queryExperience, logAnalytics: experienceOnLogAnalytics },
  usageEvents: { store: queryCustomEvents, logAnalytics: customEventsOnLogAnalytics },
  usageBreakdowns: { store: queryBreakdowns, logAnalytics: breakdownsOnLogAnalytics },
  // Funnels, retention and user flows need every item of a user in order; the portal has views of its own.
  usageFunnel: {
    store: (reader, { step, ...options }) => queryFunnel(reader, step, options),
    logAnalytics: {
      notAvailable:
        'Funnels are not available with Azure Monitor as the source: open Funnels in the Application Insights resource.',
      portalBlade: 'funnels',
    },
  },
  usageRetention: {
    store: (reader, { unit, ...options }) => queryRetention(reader, unit, options),
    logAnalytics: {
      notAvailable:
        'Retention is not available with Azure Monitor as the source: open Retention in the Application Insights resource.',
      portalBlade: 'retention',
    },
  },
  usageFlows: {
    store: (reader, { page, ...options }) => queryUserFlows(reader, page, options),
    logAnalytics: {
      notAvailable:
        'User flows are not available with Azure Monitor as the source: open User Flows in the Application Insights resource.',
      portalBlade: 'userFlows',
    },
  },
  usageSignIn: signInHealth,
} satisfies { [N in EndpointName]?: DashboardQuery<N> };

export type DashboardQueryName = keyof typeof dashboardQueries;
/** The registered queries on one back-end (the local store, Log Analytics, or the store holder). */
export type Dashboard = DashboardRunner<typeof dashboardQueries>;

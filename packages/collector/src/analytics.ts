import type { CustomEvents, Experience } from '@gatehouse/api-contract';
import { queryCustomEvents } from './analytics-events.js';
import { queryFunnel, type FunnelStep, type FunnelStepResult } from './analytics-funnel.js';
import { queryExperience } from './analytics-experience.js';
import type { Period, UsageOptions, UsageReader } from './queries.js';

/** The dashboard's product-analytics queries (issue 13), beside the usage ones (queries.ts). */
export interface AnalyticsQueries {
  experience(options?: UsageOptions): Promise<Experience>;
  customEvents(options?: UsageOptions): Promise<CustomEvents>;
  /** Not yet served by the API (no contract entry nor panel yet). */
  funnel(steps: FunnelStep[], options?: UsageOptions): Promise<Period & { steps: FunnelStepResult[] }>;
}

export function createAnalyticsQueries(reader: Pick<UsageReader, 'read'>): AnalyticsQueries {
  return {
    experience: (options) => queryExperience(reader, options),
    customEvents: (options) => queryCustomEvents(reader, options),
    funnel: (steps, options) => queryFunnel(reader, steps, options),
  };
}

import type { CustomEvents, Experience, Retention, RetentionUnit, UserFlows } from '@gatehouse/api-contract';
import { queryCustomEvents } from './analytics-events.js';
import type { FunnelStep } from '@gatehouse/api-contract';
import { queryFunnel, type FunnelStepResult } from './analytics-funnel.js';
import { queryExperience } from './analytics-experience.js';
import { queryUserFlows } from './analytics-flows.js';
import { queryRetention } from './analytics-retention.js';
import type { Period, UsageOptions, UsageReader } from './queries.js';

/** The dashboard's product-analytics queries (issue 13), beside the usage ones (queries.ts). */
export interface AnalyticsQueries {
  experience(options?: UsageOptions): Promise<Experience>;
  customEvents(options?: UsageOptions): Promise<CustomEvents>;
  funnel(steps: FunnelStep[], options?: UsageOptions): Promise<Period & { steps: FunnelStepResult[] }>;
  retention(unit: RetentionUnit, options?: UsageOptions): Promise<Retention>;
  userFlows(page: string, options?: UsageOptions): Promise<UserFlows>;
}

export function createAnalyticsQueries(reader: Pick<UsageReader, 'read'>): AnalyticsQueries {
  return {
    experience: (options) => queryExperience(reader, options),
    customEvents: (options) => queryCustomEvents(reader, options),
    funnel: (steps, options) => queryFunnel(reader, steps, options),
    retention: (unit, options) => queryRetention(reader, unit, options),
    userFlows: (page, options) => queryUserFlows(reader, page, options),
  };
}

import type { CustomEvents, Experience } from '@gatehouse/api-contract';
import { queryCustomEvents } from './analytics-events.js';
import { queryExperience } from './analytics-experience.js';
import type { UsageOptions, UsageReader } from './queries.js';

/** The dashboard's product-analytics queries (issue 13), beside the usage ones (queries.ts). */
export interface AnalyticsQueries {
  experience(options?: UsageOptions): Promise<Experience>;
  customEvents(options?: UsageOptions): Promise<CustomEvents>;
}

export function createAnalyticsQueries(reader: Pick<UsageReader, 'read'>): AnalyticsQueries {
  return {
    experience: (options) => queryExperience(reader, options),
    customEvents: (options) => queryCustomEvents(reader, options),
  };
}

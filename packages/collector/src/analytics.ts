import type { Experience } from '@gatehouse/api-contract';
import { queryExperience } from './analytics-experience.js';
import type { UsageOptions, UsageReader } from './queries.js';

/** The dashboard's product-analytics queries (issue 13), beside the usage ones (queries.ts). */
export interface AnalyticsQueries {
  experience(options?: UsageOptions): Promise<Experience>;
}

export function createAnalyticsQueries(reader: Pick<UsageReader, 'read'>): AnalyticsQueries {
  return {
    experience: (options) => queryExperience(reader, options),
  };
}

import type {
  Breakdowns,
  CustomEvents,
  Experience,
  Funnel,
  Retention,
  RetentionUnit,
  UserFlows,
} from '@gatehouse/api-contract';
import { queryBreakdowns } from './breakdowns.js';
import { queryCustomEvents } from './events.js';
import type { FunnelStep } from '@gatehouse/api-contract';
import { queryFunnel, type FunnelStepResult } from './funnel.js';
import { queryExperience } from './experience.js';
import { queryUserFlows } from './flows.js';
import { queryRetention } from './retention.js';
import type { Period, UsageOptions, UsageReader } from './sql.js';

/** The dashboard's product-analytics queries, beside the usage ones (analytics/usage.ts). */
export interface AnalyticsQueries {
  experience(options?: UsageOptions): Promise<Experience>;
  customEvents(options?: UsageOptions): Promise<CustomEvents>;
  funnel(
    steps: FunnelStep[],
    options?: UsageOptions,
  ): Promise<Period & { steps: FunnelStepResult[]; estimates: Funnel['estimates'] }>;
  retention(unit: RetentionUnit, options?: UsageOptions): Promise<Retention>;
  userFlows(page: string, options?: UsageOptions): Promise<UserFlows>;
  /** Visitors by referring site, browser, operating system and device class (ADR 0073). */
  breakdowns(options?: UsageOptions): Promise<Breakdowns>;
}

export function createAnalyticsQueries(reader: Pick<UsageReader, 'read'>): AnalyticsQueries {
  return {
    experience: (options) => queryExperience(reader, options),
    customEvents: (options) => queryCustomEvents(reader, options),
    funnel: (steps, options) => queryFunnel(reader, steps, options),
    retention: (unit, options) => queryRetention(reader, unit, options),
    userFlows: (page, options) => queryUserFlows(reader, page, options),
    breakdowns: (options) => queryBreakdowns(reader, options),
  };
}

import { z } from 'zod';
import {
  FUNNEL_STEP_NAME_MAX,
  FUNNEL_STEPS,
  funnelStepKinds,
  type FunnelStep,
  type FunnelStepKind,
} from './funnel-rules.js';
import {
  checkPeriod,
  countSchema,
  estimatesSchema,
  periodFields,
  periodQueryFields,
  segmentFields,
  timeSchema,
} from './usage.js';

/** The web vitals the browser reports (apps/web/src/telemetry/web-vitals.ts), as metrics of these names. */
export const webVitals = ['LCP', 'INP', 'CLS', 'FCP', 'TTFB'] as const;
export type WebVitalName = (typeof webVitals)[number];
export const vitalRatings = ['good', 'needs-improvement', 'poor'] as const;
export type VitalRating = (typeof vitalRatings)[number];

const share = z.number().min(0).max(1);

export const vitalSummarySchema = z
  .strictObject({
    count: countSchema.meta({ description: 'Values reported' }),
    p75: z
      .number()
      .nullable()
      .meta({ description: 'The 75th percentile: milliseconds, except CLS (a score)' }),
    rating: z.enum(vitalRatings).nullable().meta({ description: "The p75's rating by Google's thresholds" }),
    good: share,
    needsImprovement: share,
    poor: share,
  })
  .meta({ id: 'VitalSummary' });

/** Keyed by vital; a vital without values in the period is absent. */
const byVital = z
  .strictObject(
    Object.fromEntries(webVitals.map((name) => [name, vitalSummarySchema.optional()])) as Record<
      WebVitalName,
      z.ZodOptional<typeof vitalSummarySchema>
    >,
  )
  .meta({ description: 'Per vital; absent when none was reported' });

export const experienceEstimateFields = ['p75'] as const;
export const experienceSchema = z
  .strictObject({
    ...periodFields,
    overall: byVital,
    pages: z
      .array(
        z.strictObject({
          page: z.string().meta({ description: "The landing page's name (its page view's)" }),
          vitals: byVital,
        }),
      )
      .meta({ description: 'Most reported first, at most 100' }),
    bucketMs: z.int().min(1).meta({ description: 'Width of each trend bucket' }),
    trend: z
      .array(
        z.strictObject({
          start: timeSchema,
          p75: z.strictObject(
            Object.fromEntries(webVitals.map((name) => [name, z.number().nullable()])) as Record<
              WebVitalName,
              z.ZodNullable<z.ZodNumber>
            >,
          ),
        }),
      )
      .meta({
        description: 'The p75 of each vital per bucket (aligned as the timeseries’), every bucket listed',
      }),
    estimates: estimatesSchema(experienceEstimateFields),
  })
  .meta({ id: 'Experience' });

export const eventEstimateFields = ['users', 'sessions'] as const;
export const customEventsSchema = z
  .strictObject({
    ...periodFields,
    events: z
      .array(
        z.strictObject({
          name: z.string(),
          count: countSchema,
          users: countSchema.meta({ description: 'Distinct users who sent it' }),
          sessions: countSchema.meta({ description: 'Distinct sessions it happened in' }),
        }),
      )
      .meta({ description: 'Per event name, the most frequent first (at most 100)' }),
    estimates: estimatesSchema(eventEstimateFields),
  })
  .meta({ id: 'CustomEvents' });

const STEP = new RegExp(`^(${funnelStepKinds.join('|')}):(.{1,${FUNNEL_STEP_NAME_MAX}})$`, 's');
const funnelStep = z
  .string()
  .regex(STEP, 'must be page:<page name> or event:<event name>')
  .transform((value): FunnelStep => {
    const [, kind, name] = STEP.exec(value) ?? [];
    return { kind: kind as FunnelStepKind, name: name ?? '' };
  });

/** `?step=page:Home&step=event:Report exported`: 2 to 5 steps (FUNNEL_STEPS), in order. */
export const funnelQuery = z
  .strictObject({
    ...periodQueryFields,
    ...segmentFields,
    step: z
      .union([funnelStep.transform((step) => [step]), z.array(funnelStep)], {
        error: `must be page:<page name> or event:<event name>, given ${FUNNEL_STEPS.min} to ${FUNNEL_STEPS.max} times`,
      })
      .pipe(
        z
          .array(z.object({ kind: z.enum(funnelStepKinds), name: z.string() }))
          .min(FUNNEL_STEPS.min, `must be given at least ${FUNNEL_STEPS.min} times`)
          .max(FUNNEL_STEPS.max, `must be given at most ${FUNNEL_STEPS.max} times`),
      )
      .meta({
        description: `A step, in order: page:<page view name> or event:<custom event name>; ${FUNNEL_STEPS.min} to ${FUNNEL_STEPS.max} of them`,
      }),
  })
  .superRefine(checkPeriod);

/** A funnel over more rows than it counts exactly in time reads a sample of users (ADR 0079). */
export const funnelEstimateFields = ['users', 'medianMsFromPrevious'] as const;
export const funnelSchema = z
  .strictObject({
    ...periodFields,
    steps: z.array(
      z.strictObject({
        kind: z.enum(funnelStepKinds),
        name: z.string(),
        users: countSchema.meta({
          description: 'Users with a session that reached this step after the ones before',
        }),
        dropOff: share.meta({ description: "Share of the previous step's users who did not reach this one" }),
        medianMsFromPrevious: z
          .number()
          .nullable()
          .meta({ description: 'Milliseconds; null for the first step' }),
      }),
    ),
    estimates: estimatesSchema(funnelEstimateFields),
  })
  .meta({ id: 'Funnel' });

export const retentionUnits = ['day', 'week'] as const;
export type RetentionUnit = (typeof retentionUnits)[number];

/** `?range=30d&unit=week` */
export const retentionQuery = z
  .strictObject({
    ...periodQueryFields,
    ...segmentFields,
    unit: z
      .enum(retentionUnits)
      .default('day')
      .meta({ description: 'The cohort period: a day or a week (UTC; weeks start on Monday)' }),
  })
  .superRefine(checkPeriod);

export const retentionSchema = z
  .strictObject({
    ...periodFields,
    unit: z.enum(retentionUnits),
    cohorts: z
      .array(
        z.strictObject({
          start: timeSchema.meta({ description: 'Start of the cohort period' }),
          users: countSchema.meta({
            description: 'Users whose first stored item is in this period (never seen before it)',
          }),
          returning: z.array(countSchema).meta({
            description: 'Of them, the users seen again in each following period up to the range’s end',
          }),
        }),
      )
      .meta({ description: 'Every period overlapping the range, oldest first (the triangle’s rows)' }),
  })
  .meta({ id: 'Retention' });

const pageName = z.string().min(1, 'must name a page').max(512, 'must be at most 512 characters');

/** `?range=7d&page=Home` */
export const userFlowsQuery = z
  .strictObject({
    ...periodQueryFields,
    ...segmentFields,
    page: pageName.meta({ description: 'The page (its page view’s name) the flows go from and to' }),
  })
  .superRefine(checkPeriod);

const flowPaths = z
  .array(
    z.strictObject({
      pages: z.array(z.string()).min(1).max(2).meta({ description: 'The pages, in the order visited' }),
      count: countSchema.meta({ description: 'Views of the page with this path beside it' }),
    }),
  )
  .meta({ description: 'The most common first, at most 10' });

export const userFlowsSchema = z
  .strictObject({
    ...periodFields,
    page: z.string(),
    views: countSchema.meta({ description: 'Views of the page in the period' }),
    entries: countSchema.meta({ description: 'Views that were the first page view of their session' }),
    exits: countSchema.meta({ description: 'Views that were the last page view of their session' }),
    next1: flowPaths.meta({ description: 'The page viewed next' }),
    next2: flowPaths.meta({ description: 'The next two pages' }),
    previous1: flowPaths.meta({ description: 'The page viewed just before' }),
    previous2: flowPaths.meta({ description: 'The two pages before, in the order visited' }),
  })
  .meta({ id: 'UserFlows' });

export type Funnel = z.infer<typeof funnelSchema>;
export type Retention = z.infer<typeof retentionSchema>;
export type UserFlows = z.infer<typeof userFlowsSchema>;
export type CustomEvents = z.infer<typeof customEventsSchema>;
export type VitalSummary = z.infer<typeof vitalSummarySchema>;
export type Experience = z.infer<typeof experienceSchema>;

import { z } from 'zod';
import { countSchema, periodFields, rangeQuery, timeSchema } from './usage.js';

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
  })
  .meta({ id: 'Experience' });

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
  })
  .meta({ id: 'CustomEvents' });

const STEP = /^(page|event):(.{1,512})$/s;
const funnelStep = z
  .string()
  .regex(STEP, 'must be page:<page name> or event:<event name>')
  .transform((value) => {
    const [, kind, name] = STEP.exec(value) ?? [];
    return { kind: kind as 'page' | 'event', name: name ?? '' };
  });

/** `?step=page:Home&step=event:Report exported`: 2 to 5 steps, in order. */
export const funnelQuery = z.strictObject({
  range: rangeQuery.shape.range,
  step: z
    .union([funnelStep.transform((step) => [step]), z.array(funnelStep)], {
      error: 'must be page:<page name> or event:<event name>, given 2 to 5 times',
    })
    .pipe(
      z
        .array(z.object({ kind: z.enum(['page', 'event']), name: z.string() }))
        .min(2, 'must be given at least twice (2 steps)')
        .max(5, 'must be given at most 5 times'),
    )
    .meta({
      description: 'A step, in order: page:<page view name> or event:<custom event name>; 2 to 5 of them',
    }),
});

export const funnelSchema = z
  .strictObject({
    ...periodFields,
    steps: z.array(
      z.strictObject({
        kind: z.enum(['page', 'event']),
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
  })
  .meta({ id: 'Funnel' });

export type Funnel = z.infer<typeof funnelSchema>;
export type CustomEvents = z.infer<typeof customEventsSchema>;
export type VitalSummary = z.infer<typeof vitalSummarySchema>;
export type Experience = z.infer<typeof experienceSchema>;

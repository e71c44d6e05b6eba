import { z } from 'zod';

/** The periods the usage API answers for: the last hour, day, week or 30 days. */
export const usageRanges = ['1h', '24h', '7d', '30d'] as const;
export type UsageRange = (typeof usageRanges)[number];

export const SESSIONS_LIMIT = { default: 50, max: 500 } as const;
/** What a session id or a user id (ai.session.id, ai.user.authUserId, ai.user.id) may look like. */
export const SESSION_ID = /^[A-Za-z0-9+/=_.:-]{1,128}$/;
export const USER_ID = SESSION_ID;

const time = z.iso.datetime().meta({ description: 'ISO 8601, UTC' });
const count = z.int().min(0);
const ms = z.number().nullable().meta({ description: 'Milliseconds' });
const text = z.string().nullable();

const rangeSchema = z.enum(usageRanges, { error: `must be one of ${usageRanges.join(', ')}` });

/** The browser families the collector tells apart (from the sending request's User-Agent). */
export const browserFamilies = ['Chrome', 'Edge', 'Firefox', 'Safari', 'Opera', 'Samsung Internet'] as const;
export type BrowserFamily = (typeof browserFamilies)[number];
export const deviceTypes = ['desktop', 'mobile', 'tablet'] as const;
export type DeviceType = (typeof deviceTypes)[number];
/** The operating systems the collector tells apart (from the sending request's client hints or User-Agent). */
export const operatingSystems = ['Windows', 'macOS', 'iOS', 'Android', 'Linux', 'ChromeOS'] as const;
export type OperatingSystem = (typeof operatingSystems)[number];
/**
 * A referring site in a segment: a host name as the store keeps it (lower case, never a path or a query),
 * or DIRECT for sessions that came from no other site.
 */
export const REFERRER_HOST = /^[a-z0-9._~:[\]-]{1,253}$/;
export const DIRECT = '(direct)';
export const signedInStates = ['signed-in', 'anonymous'] as const;
/** What a role may look like in a segment: a claim value, never SQL. */
export const ROLE = /^[\w.:@-]{1,64}$/;

/**
 * A segment of the usage (every usage endpoint takes it): items sent signed in or not, by a user holding
 * a role (the app's `roles` property), from a browser family, from a device class. All optional; given
 * together, an item must match each.
 */
export const segmentFields = {
  auth: z
    .enum(signedInStates, { error: `must be one of ${signedInStates.join(', ')}` })
    .optional()
    .meta({ description: 'Items sent while signed in, or anonymously' }),
  role: z
    .string()
    .regex(ROLE, 'must be a role name (letters, digits, _ . : @ -; at most 64)')
    .optional()
    .meta({ description: 'Items sent by a signed-in user holding this role' }),
  browser: z
    .enum(browserFamilies, { error: `must be one of ${browserFamilies.join(', ')}` })
    .optional()
    .meta({ description: 'Items sent from this browser family' }),
  device: z
    .enum(deviceTypes, { error: `must be one of ${deviceTypes.join(', ')}` })
    .optional()
    .meta({ description: 'Items sent from this class of device' }),
  os: z
    .enum(operatingSystems, { error: `must be one of ${operatingSystems.join(', ')}` })
    .optional()
    .meta({ description: 'Items sent from this operating system' }),
  referrer: z
    .string()
    .refine((v) => v === DIRECT || REFERRER_HOST.test(v), `must be a host name or ${DIRECT}`)
    .optional()
    .meta({
      description: `Items of sessions with a page view referred by this host (another site); ${DIRECT}: sessions with none`,
    }),
};
export interface Segment {
  auth?: (typeof signedInStates)[number] | undefined;
  role?: string | undefined;
  browser?: BrowserFamily | undefined;
  device?: DeviceType | undefined;
  os?: OperatingSystem | undefined;
  referrer?: string | undefined;
}

/**
 * The longest custom period, in days: the store keeps 90 days by default (TELEMETRY_RETENTION_DAYS), and a
 * period of 90 whole days in the viewer's time zone may be an hour longer across a clock change; the
 * slack keeps any such choice within it (docs/decisions/0083-custom-period.md).
 */
export const CUSTOM_PERIOD_MAX_DAYS = 92;
const DAY_MS = 86_400_000;

/**
 * The period of every usage endpoint: a preset `range`, or a custom `from` and `to` instead. Checked by
 * `checkPeriod` (a refinement of each query that has these fields).
 */
export const periodQueryFields = {
  // No zod default: a default range beside from and to would be refused. The collector takes 24h when
  // neither is given (period()); the document still says so.
  range: rangeSchema.optional().meta({
    default: '24h',
    description:
      'The period: the last hour (5-minute buckets), 24 hours (1-hour buckets, the default), 7 days (6-hour buckets) or 30 days (1-day buckets). Not with from and to.',
  }),
  from: time.optional().meta({
    description: `Start of a custom period (inclusive), with to, instead of range; at most ${CUSTOM_PERIOD_MAX_DAYS} days before to. Buckets: 5 minutes up to 2 hours, 1 hour up to 2 days, 6 hours up to 14 days, else 1 day.`,
  }),
  to: time.optional().meta({ description: 'End of a custom period (exclusive), with from' }),
};

/** A custom period is both bounds or neither, never beside a range, forwards, and at most CUSTOM_PERIOD_MAX_DAYS long. */
export function checkPeriod(
  query: { range?: string | undefined; from?: string | undefined; to?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  const { range, from, to } = query;
  if (from === undefined && to === undefined) return;
  if (from === undefined || to === undefined) {
    ctx.addIssue({
      code: 'custom',
      path: [from === undefined ? 'from' : 'to'],
      message: 'must be given with from and to both',
    });
    return;
  }
  if (range !== undefined) {
    ctx.addIssue({ code: 'custom', path: ['range'], message: 'must not be given with from and to' });
    return;
  }
  const length = Date.parse(to) - Date.parse(from);
  if (length <= 0) ctx.addIssue({ code: 'custom', path: ['to'], message: 'must be after from' });
  else if (length > CUSTOM_PERIOD_MAX_DAYS * DAY_MS)
    ctx.addIssue({
      code: 'custom',
      path: ['to'],
      message: `must be at most ${CUSTOM_PERIOD_MAX_DAYS} days after from`,
    });
}

/** Query of the period-only endpoints; strict: an unknown parameter is a 400, not silently ignored. */
export const rangeQuery = z.strictObject({ ...periodQueryFields, ...segmentFields }).superRefine(checkPeriod);

export const sessionsQuery = z
  .strictObject({
    ...periodQueryFields,
    ...segmentFields,
    limit: z
      .string({ error: 'must be a whole number' })
      .regex(/^\d{1,4}$/, 'must be a whole number')
      .transform(Number)
      .pipe(
        z.int().min(1, 'must be at least 1').max(SESSIONS_LIMIT.max, `must be at most ${SESSIONS_LIMIT.max}`),
      )
      .optional()
      .meta({ description: `Most sessions to list (default ${SESSIONS_LIMIT.default})` }),
  })
  .superRefine(checkPeriod);

/** Endpoints with only path parameters take no query at all. */
export const noQuery = z.strictObject({});

export const sessionParams = z.strictObject({
  id: z
    .string()
    .regex(SESSION_ID, 'must be a session id (1–128 of A–Z a–z 0–9 + / = _ . : -)')
    .meta({ description: 'The session id (ai.session.id)' }),
});

export const userParams = z.strictObject({
  id: z.string().regex(USER_ID, 'must be a user id (1–128 of A–Z a–z 0–9 + / = _ . : -)').meta({
    description:
      'A user id: the pseudonymous id of a signed-in user (ai.user.authUserId), or the SDK’s anonymous id (ai.user.id); items with either equal to it match',
  }),
});

/** The period asked for: [from, to); `custom` for one given by its bounds. */
const period = {
  range: z.enum([...usageRanges, 'custom']),
  from: time.meta({ description: 'Start of the period (inclusive)' }),
  to: time.meta({ description: 'End of the period (exclusive)' }),
};

export const tileSchema = z
  .strictObject({
    value: count,
    previous: count.meta({ description: 'The value over the previous period of equal length' }),
    change: z
      .number()
      .nullable()
      .meta({ description: '(value − previous) / previous; null when previous is 0' }),
  })
  .meta({ id: 'Tile' });

/** The overview's tiles, in the order the dashboard shows them. */
export const tileKeys = [
  'users',
  'signedInUsers',
  // Signed-in users whose id this server issued (docs/decisions/0017).
  'verifiedUsers',
  'sessions',
  'pageViews',
  'exceptions',
  'failedCalls',
] as const;
export type TileKey = (typeof tileKeys)[number];

export const storeFullSchema = z
  .strictObject({
    since: time.meta({
      description: 'When the store reached its quota: every telemetry request has been refused (507) since',
    }),
    usedBytes: count.meta({ description: 'Bytes the data folder holds' }),
    maxBytes: count.meta({ description: 'Its quota (TELEMETRY_MAX_STORE_MB)' }),
  })
  .meta({ id: 'StoreFull' });
/** Where the dashboard's figures come from, and how fresh they are (ADR 0050). */
export const usageSourceSchema = z
  .strictObject({
    kind: z.enum(['local', 'log-analytics']).meta({
      description:
        "local: this server's own store; log-analytics: Azure Monitor Logs (KQL over the workspace)",
    }),
    latestItem: time
      .nullable()
      .optional()
      .meta({ description: 'The newest item the source holds (log-analytics: of the last hour)' }),
    ingestionDelayMs: z.number().nullable().optional().meta({
      description: 'Median time from an item to its being queryable, over the last hour (log-analytics)',
    }),
  })
  .meta({ id: 'UsageSource' });
export type UsageSourceInfo = z.infer<typeof usageSourceSchema>;

export const overviewSchema = z
  .strictObject({
    ...period,
    source: usageSourceSchema.optional(),
    previousFrom: time.meta({ description: 'Start of the previous period (which ends at from)' }),
    tiles: z.strictObject(
      Object.fromEntries(tileKeys.map((key) => [key, tileSchema])) as Record<TileKey, typeof tileSchema>,
    ),
    storeFull: storeFullSchema.nullable().meta({
      description:
        'Set while the telemetry store has reached its disk quota and refuses new telemetry; null when it takes telemetry, or when this source cannot tell (Log Analytics)',
    }),
  })
  .meta({ id: 'Overview' });

export const timeseriesBucketSchema = z
  .strictObject({
    start: time.meta({ description: 'Start of the bucket; the bucket is [start, start + bucketMs)' }),
    users: count,
    sessions: count,
    pageViews: count,
    exceptions: count,
    failedCalls: count,
  })
  .meta({ id: 'TimeseriesBucket' });

export const timeseriesSchema = z
  .strictObject({
    ...period,
    bucketMs: z.int().min(1).meta({ description: 'Width of each bucket' }),
    buckets: z
      .array(timeseriesBucketSchema)
      .meta({ description: 'Every bucket of the period, empty ones included' }),
  })
  .meta({ id: 'Timeseries' });

/**
 * Which figures of a list's rows are estimates, and how close (ADR 0074). Empty when every
 * figure is exact. The page marks each such column and says its bound.
 */
export const estimatesSchema = <const F extends readonly [string, ...string[]]>(fields: F) =>
  z
    .array(
      z.strictObject({
        field: z.enum(fields).meta({ description: "The row's figure that is an estimate" }),
        kind: z.enum(['distinct-count', 'percentile']),
        error: z.number().min(0).max(1).meta({
          description:
            "For a distinct count, its relative standard error (about two in three estimates are within it, nearly all within three times it); for a percentile, the most it may be off, as a share of the value (errorOf 'value') or of the values' ranks (errorOf 'rank')",
        }),
        errorOf: z.enum(['value', 'rank']),
        method: z.string().meta({ description: 'How it is estimated, in a sentence for the page' }),
      }),
    )
    .meta({ description: 'The figures of every row that are estimates; empty when all are exact' });

export const pageRowSchema = z
  .strictObject({ name: z.string(), views: count, users: count, avgDurationMs: ms, p95DurationMs: ms })
  .meta({ id: 'Page' });

export const exceptionGroupSchema = z
  .strictObject({
    type: text.meta({ description: "The first exception's type name" }),
    message: text,
    topFrame: text,
    problemId: text.meta({ description: 'The problem id the sender gave, if any (latest occurrence)' }),
    count,
    usersAffected: count,
    firstSeen: time,
    lastSeen: time,
    sampleStack: text.meta({ description: 'The stack of the latest occurrence' }),
  })
  .meta({ id: 'ExceptionGroup' });

export const dependencyRowSchema = z
  .strictObject({
    target: text,
    name: text,
    count,
    failures: count,
    failureRate: z.number().min(0).max(1).meta({ description: 'failures / count' }),
    p50DurationMs: ms,
    p95DurationMs: ms,
  })
  .meta({ id: 'Dependency' });

const verified = z
  .boolean()
  .meta({ description: 'The authenticated user id is one this server issued (a forged one is not)' });

export const sessionRowSchema = z
  .strictObject({
    sessionId: z.string(),
    user: text.meta({
      description: 'Pseudonymous authenticated user id if any, else the anonymous user id',
    }),
    authenticated: z.boolean(),
    verified,
    start: time,
    lengthMs: count.meta({ description: 'First to last item of the session within the period' }),
    pages: count,
    errors: count.meta({ description: 'Exceptions and failed calls' }),
  })
  .meta({ id: 'Session' });

export const pageEstimateFields = ['users', 'p95DurationMs'] as const;
export const pagesSchema = z
  .strictObject({ ...period, pages: z.array(pageRowSchema), estimates: estimatesSchema(pageEstimateFields) })
  .meta({ id: 'Pages' });
export const exceptionsSchema = z
  .strictObject({ ...period, exceptions: z.array(exceptionGroupSchema) })
  .meta({ id: 'Exceptions' });
export const dependencyEstimateFields = ['p50DurationMs', 'p95DurationMs'] as const;
export const dependenciesSchema = z
  .strictObject({
    ...period,
    dependencies: z.array(dependencyRowSchema),
    estimates: estimatesSchema(dependencyEstimateFields),
  })
  .meta({ id: 'Dependencies' });
export const sessionsSchema = z
  .strictObject({ ...period, sessions: z.array(sessionRowSchema) })
  .meta({ id: 'Sessions' });

export const timelineItemSchema = z
  .strictObject({
    time,
    type: z.string().meta({
      description:
        'pageview, dependency, exception, event, trace, metric, request, pageviewperformance or availability',
    }),
    name: text,
    url: text,
    operationId: text,
    durationMs: ms,
    success: z.boolean().nullable(),
    resultCode: text,
    target: text,
    message: text,
  })
  .meta({ id: 'TimelineItem' });

export const sessionTimelineSchema = z
  .strictObject({
    sessionId: z.string(),
    user: text,
    authenticated: z.boolean(),
    verified,
    items: z.array(timelineItemSchema),
    truncated: z.boolean().meta({ description: 'More than 1,000 items: only the first are listed' }),
  })
  .meta({ id: 'SessionTimeline' });

export const erasedSchema = z
  .strictObject({ erased: count.meta({ description: 'Items erased' }) })
  .meta({ id: 'Erased' });

/** One entry of a breakdown: a value, its visitors and their share of the period's. */
export const breakdownRowSchema = z
  .strictObject({
    value: z.string().meta({ description: `The entry (for referrers: a host, or ${DIRECT})` }),
    visitors: count.meta({ description: 'Distinct users with it in the period' }),
    share: z.number().min(0).max(1).meta({ description: 'visitors / the period’s visitors (total)' }),
  })
  .meta({ id: 'BreakdownRow' });
const breakdownList = z
  .array(breakdownRowSchema)
  .meta({ description: 'The most visitors first (at most 100)' });
export const breakdownsSchema = z
  .strictObject({
    ...period,
    total: count.meta({ description: 'Distinct users of the period (the Users tile)' }),
    referrers: breakdownList,
    browsers: breakdownList,
    operatingSystems: breakdownList,
    devices: breakdownList,
  })
  .meta({ id: 'Breakdowns' });

/** For the other areas' schemas (analytics.ts): the period every answer names, times and counts. */
export { period as periodFields, time as timeSchema, count as countSchema };

export type Tile = z.infer<typeof tileSchema>;
export type Overview = z.infer<typeof overviewSchema>;
export type StoreFull = z.infer<typeof storeFullSchema>;
export type TimeseriesBucket = z.infer<typeof timeseriesBucketSchema>;
export type Timeseries = z.infer<typeof timeseriesSchema>;
export type PageRow = z.infer<typeof pageRowSchema>;
export type Pages = z.infer<typeof pagesSchema>;
/** One estimated field of an answer (Pages, Dependencies, Custom events, Experience). */
/** One figure of an answer that is an estimate (estimatesSchema), whichever answer it is of. */
export type Estimate = Omit<Pages['estimates'][number], 'field'> & { field: string };
export type ExceptionGroup = z.infer<typeof exceptionGroupSchema>;
export type Exceptions = z.infer<typeof exceptionsSchema>;
export type DependencyRow = z.infer<typeof dependencyRowSchema>;
export type Dependencies = z.infer<typeof dependenciesSchema>;
export type SessionRow = z.infer<typeof sessionRowSchema>;
export type Sessions = z.infer<typeof sessionsSchema>;
export type TimelineItem = z.infer<typeof timelineItemSchema>;
export type SessionTimeline = z.infer<typeof sessionTimelineSchema>;
export type Erased = z.infer<typeof erasedSchema>;
export type BreakdownRow = z.infer<typeof breakdownRowSchema>;
export type Breakdowns = z.infer<typeof breakdownsSchema>;

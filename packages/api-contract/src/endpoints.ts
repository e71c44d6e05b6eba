import { z } from 'zod';
import type { Access } from './access.js';
import {
  customEventsSchema,
  experienceSchema,
  funnelQuery,
  funnelSchema,
  retentionQuery,
  retentionSchema,
  userFlowsQuery,
  userFlowsSchema,
} from './analytics.js';
import {
  annotationDeletedSchema,
  annotationParams,
  annotationSchema,
  annotationsQuery,
  annotationsSchema,
  newAnnotationBody,
} from './annotations.js';
import { apiUserSchema, telemetryUserSchema } from './me.js';
import { signInFailureReasons } from './sign-in-events.js';
import {
  breakdownsSchema,
  countSchema,
  dependenciesSchema,
  estimatesSchema,
  erasedSchema,
  exceptionsSchema,
  noQuery,
  overviewSchema,
  pagesSchema,
  periodFields,
  rangeQuery,
  sessionParams,
  sessionsQuery,
  sessionsSchema,
  sessionTimelineSchema,
  timeSchema,
  timeseriesSchema,
  userParams,
} from './usage.js';

/** One operation of the API: what it takes, what it answers, and which error statuses it may send. */
export interface Endpoint {
  method: 'get' | 'post' | 'put' | 'patch' | 'delete';
  /** Relative to /api, in OpenAPI's syntax (`/usage/sessions/{id}/timeline`). */
  path: `/${string}`;
  summary: string;
  tag?: string;
  access: Access;
  params?: z.ZodObject;
  query?: z.ZodObject;
  /** A JSON request body (POST, PUT, PATCH), validated like the parameters. */
  body?: z.ZodType;
  /** The 200 answer: a JSON body's schema, or another media type with a description. */
  response: z.ZodType | { mediaType: string; description: string };
  /** Error statuses beyond the ones its access brings (401, 403). */
  errors?: Partial<Record<400 | 404 | 501 | 503, string>>;
}

/** A table of endpoints: Gatehouse's (`endpoints` below), or a test's own. */
export type Contract = Record<string, Endpoint>;

/** An endpoint of the usage dashboard: admins only; its parameters may be refused (400). */
const usage = <const E extends Omit<Endpoint, 'tag' | 'access'>>(endpoint: E) => ({
  tag: 'usage',
  access: 'admin' as const,
  ...endpoint,
  errors: {
    400: 'A parameter is invalid; the message names each bad one',
    503: 'The identity provider or the telemetry store (held by another replica) could not be reached; retry shortly',
    ...endpoint.errors,
  },
});

/** Annotations live in Gatehouse's own store, which a server reading Azure Monitor may lack (ADR 0085). */
const annotationErrors = {
  501: "Annotations are kept in Gatehouse's own telemetry store, and this server reads Azure Monitor without one",
};

/**
 * Every endpoint of /api, once. The server routes by it, its tests check every answer against it, the
 * SPA takes its types from it, and the OpenAPI document is generated from it (openapi.ts).
 * To add an endpoint: see this package's README.
 */
export const endpoints = {
  openapi: {
    method: 'get',
    path: '/openapi.json',
    summary: 'This description (OpenAPI 3.1)',
    access: 'public',
    response: { mediaType: 'application/json', description: 'OpenAPI 3.1 document' },
  },
  me: {
    method: 'get',
    path: '/me',
    summary: 'Who is calling',
    access: 'signed-in',
    response: apiUserSchema,
    errors: { 503: 'The identity provider could not be reached to check the token' },
  },
  telemetryUser: {
    method: 'get',
    path: '/telemetry-user',
    summary: "The caller's pseudonymous telemetry user id, issued and verifiable by this server",
    access: 'signed-in',
    response: telemetryUserSchema,
  },
  usageOverview: usage({
    method: 'get',
    path: '/usage/overview',
    summary: 'Tiles for the period, against the previous period of equal length',
    query: rangeQuery,
    response: overviewSchema,
  }),
  usageTimeseries: usage({
    method: 'get',
    path: '/usage/timeseries',
    summary:
      'Per bucket: users, sessions, page views, exceptions, failed calls. Buckets are aligned to multiples of their width (UTC); the period ends at the end of the current bucket.',
    query: rangeQuery,
    response: timeseriesSchema,
  }),
  usagePages: usage({
    method: 'get',
    path: '/usage/pages',
    summary: 'Per page name: views, users, average and p95 duration (top 100 by views)',
    query: rangeQuery,
    response: pagesSchema,
  }),
  usageExceptions: usage({
    method: 'get',
    path: '/usage/exceptions',
    summary: 'Exceptions grouped by type, message and top stack frame (top 100 by count)',
    query: rangeQuery,
    response: exceptionsSchema,
  }),
  usageDependencies: usage({
    method: 'get',
    path: '/usage/dependencies',
    summary:
      'Calls (ajax, fetch, dependencies) by target and name: count, failure rate, p50 and p95 duration (top 100)',
    query: rangeQuery,
    response: dependenciesSchema,
  }),
  usageBreakdowns: usage({
    method: 'get',
    path: '/usage/breakdowns',
    summary:
      'Visitors by referring site (the hosts of their sessions’ page views from other sites), browser, operating system and device class: counts and shares (top 100 each)',
    query: rangeQuery,
    response: breakdownsSchema,
  }),
  usageSessions: usage({
    method: 'get',
    path: '/usage/sessions',
    summary: 'Sessions in the period, the latest start first',
    query: sessionsQuery,
    response: sessionsSchema,
  }),
  usageSessionTimeline: usage({
    method: 'get',
    path: '/usage/sessions/{id}/timeline',
    summary: 'One session’s items in time order (at most 1,000)',
    params: sessionParams,
    query: noQuery,
    response: sessionTimelineSchema,
    errors: { 404: 'There is no session with this id' },
  }),
  usageUserExport: usage({
    method: 'get',
    path: '/usage/users/{id}/export',
    summary: 'Every item stored for one user, as NDJSON envelopes (an access request)',
    params: userParams,
    query: noQuery,
    response: {
      mediaType: 'application/x-ndjson',
      description:
        'One Application Insights envelope per line, oldest first; then, when the user wrote annotations, one line `{"annotation":{id,time,note,createdAt}}` each (their own data; others\' annotations never). Empty when nothing is stored (sent as an attachment)',
    },
  }),
  usageUserErase: usage({
    method: 'delete',
    path: '/usage/users/{id}',
    summary:
      'Erases every item stored for one user, those not yet loaded from the journal included (an erasure request)',
    params: userParams,
    query: noQuery,
    response: erasedSchema,
  }),
  annotations: usage({
    method: 'get',
    path: '/usage/annotations',
    summary:
      "Annotations (marked moments: a release, an incident) within a chart's period: the period the timeseries of the same query answers for",
    query: annotationsQuery,
    response: annotationsSchema,
    errors: annotationErrors,
  }),
  createAnnotation: usage({
    method: 'post',
    path: '/usage/annotations',
    summary: 'Marks a moment with a short note; the author is the caller',
    query: noQuery,
    body: newAnnotationBody,
    response: annotationSchema,
    errors: annotationErrors,
  }),
  deleteAnnotation: usage({
    method: 'delete',
    path: '/usage/annotations/{id}',
    summary: 'Deletes an annotation (any admin may, as in the analytics tools)',
    params: annotationParams,
    query: noQuery,
    response: annotationDeletedSchema,
    errors: { ...annotationErrors, 404: 'There is no annotation with this id' },
  }),
  usageExperience: usage({
    method: 'get',
    path: '/usage/experience',
    summary:
      "Web vitals (LCP, INP, CLS, FCP, TTFB): overall and per landing page (top 100), the p75 with Google's rating and the shares in each rating; and the p75 per chart bucket",
    query: rangeQuery,
    response: experienceSchema,
  }),
  usageEvents: usage({
    method: 'get',
    path: '/usage/events',
    summary: 'Custom events (trackEvent) by name: count, users and sessions (top 100 by count)',
    query: rangeQuery,
    response: customEventsSchema,
  }),
  usageFunnel: usage({
    method: 'get',
    path: '/usage/funnel',
    summary:
      'Users who went through 2 to 5 steps (pages or custom events) in order within a session: per step, users, drop-off and median time from the previous step',
    query: funnelQuery,
    response: funnelSchema,
  }),
  usageRetention: usage({
    method: 'get',
    path: '/usage/retention',
    summary:
      'Retention: users by the day or week they were first seen, and how many of them came back in each following period',
    query: retentionQuery,
    response: retentionSchema,
  }),
  usageFlows: usage({
    method: 'get',
    path: '/usage/flows',
    summary:
      'User flows around one page: the most common pages one and two steps before and after it within sessions',
    query: userFlowsQuery,
    response: userFlowsSchema,
  }),
  usageSignIn: usage({
    method: 'get',
    path: '/usage/sign-in',
    summary:
      "Sign-in health (ADR 0109): the journey's funnel and success rate against the previous period, the time to sign in, failures by reason and step, renewals per chart bucket, how sessions ended, the API's refusals by reason (of every request: the server's counts have no segment), and whether the last hour's failed sign-ins are far above the week before's",
    query: rangeQuery,
    response: z
      .strictObject({
        ...periodFields,
        bucketMs: z
          .int()
          .min(1)
          .meta({ description: "Width of each renewals bucket (the period's chart buckets)" }),
        funnel: z
          .strictObject({
            started: countSchema,
            returned: countSchema,
            redeemed: countSchema,
            signedIn: countSchema,
            failed: countSchema,
          })
          .meta({ description: 'Sign-in journeys by the furthest step reported, in the period' }),
        successRate: z
          .number()
          .min(0)
          .max(1)
          .nullable()
          .meta({ description: 'Signed in, of those that ended (signed in or failed); null when none did' }),
        previousSuccessRate: z.number().min(0).max(1).nullable(),
        change: z
          .number()
          .nullable()
          .meta({ description: 'successRate − previousSuccessRate (a difference of shares)' }),
        timeToSignIn: z.strictObject({ p50Ms: z.number().nullable(), p95Ms: z.number().nullable() }).meta({
          description: 'From pressing Sign in (or being sent) to signed in, the provider’s page included',
        }),
        failures: z
          .array(
            z.strictObject({
              reason: z
                .string()
                .meta({ description: `One of ${signInFailureReasons.length} codes (sign-in-events.ts)` }),
              step: z.string(),
              count: countSchema,
            }),
          )
          .meta({ description: 'Failed sign-ins by reason and step, the most frequent first (at most 100)' }),
        renewals: z
          .array(
            z.strictObject({
              start: timeSchema,
              succeeded: countSchema,
              failed: countSchema,
              forcedSignIn: countSchema,
            }),
          )
          .meta({ description: 'Token renewals per bucket, every bucket listed' }),
        sessionEnds: z.array(z.strictObject({ reason: z.string(), count: countSchema })),
        refusals: z
          .array(z.strictObject({ reason: z.string(), count: countSchema }))
          .meta({ description: "The API's refused requests by reason, the most frequent first" }),
        alert: z
          .strictObject({
            raised: z.boolean(),
            lastHour: z.strictObject({
              ended: countSchema,
              failed: countSchema,
              rate: z.number().nullable(),
            }),
            weekBefore: z.strictObject({
              ended: countSchema,
              failed: countSchema,
              rate: z.number().nullable(),
            }),
          })
          .meta({
            description:
              "The last hour's failed sign-ins against the 7 days before it (whatever the period or segment): raised when at least 5 failed and the hour's rate is 3 standard errors above the week's",
          }),
        estimates: estimatesSchema(['p50Ms', 'p95Ms']),
      })
      .meta({ id: 'SignInHealth' }),
  }),
} as const satisfies Record<string, Endpoint>;

export type Endpoints = typeof endpoints;
export type EndpointName = keyof Endpoints;
export type Method = Endpoint['method'];

type Part = 'params' | 'query' | 'body' | 'response';
type Output<C, N extends keyof C, K extends Part, Else> = C[N] extends { [P in K]: infer S extends z.ZodType }
  ? z.output<S>
  : Else;
type Input<C, N extends keyof C, K extends Part> = C[N] extends { [P in K]: infer S extends z.ZodType }
  ? z.input<S>
  : undefined;

/** The body a 2xx answer of an endpoint carries (JSON endpoints only). */
export type ResponseOf<N extends keyof C, C = Endpoints> = Output<C, N, 'response', never>;
/** An endpoint's path parameters, once validated. */
export type ParamsOf<N extends keyof C, C = Endpoints> = Output<C, N, 'params', Record<string, never>>;
/** An endpoint's query, once validated (defaults filled in). */
export type QueryOf<N extends keyof C, C = Endpoints> = Output<C, N, 'query', Record<string, never>>;
/** An endpoint's JSON request body, once validated; undefined for an endpoint that takes none. */
export type BodyOf<N extends keyof C, C = Endpoints> = Output<C, N, 'body', undefined>;

/** The endpoint that answers this method at this path (`'/usage/sessions/{id}/timeline'`). */
export type EndpointAt<M extends Method, P extends string, C = Endpoints> = {
  [N in keyof C]: C[N] extends { method: M; path: P } ? N : never;
}[keyof C];
/** Every path with an endpoint for this method: what a typed client may ask. */
export type PathsOf<M extends Method, C = Endpoints> = {
  [N in keyof C]: C[N] extends { method: M; path: infer P extends string } ? P : never;
}[keyof C];

/**
 * What a client sends to an endpoint, before the server validates it: the path parameters it must
 * give, the query (optional keys where the schema has a default) and the body it must give.
 */
export type RequestOf<N extends keyof C, C = Endpoints> = (Input<C, N, 'params'> extends undefined
  ? { params?: undefined }
  : { params: Input<C, N, 'params'> }) & { query?: Input<C, N, 'query'> } & (Input<
    C,
    N,
    'body'
  > extends undefined
    ? { body?: undefined }
    : { body: Input<C, N, 'body'> });

import { webVitals } from '@gatehouse/collector';
import { RANGES, SESSION_ID_PATTERN, SESSIONS_LIMIT_MAX } from './usage.js';

/**
 * OpenAPI 3.1 description of the product API (`/api`), served at /api/openapi.json. The tests check that
 * every route the server implements is described here.
 */
const time = { type: 'string', format: 'date-time' } as const;
const count = { type: 'integer', minimum: 0 } as const;
const ms = { type: ['number', 'null'], description: 'Milliseconds' } as const;
const text = { type: ['string', 'null'] } as const;
const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

const period = {
  range: { type: 'string', enum: RANGES },
  from: { ...time, description: 'Start of the period (inclusive)' },
  to: { ...time, description: 'End of the period (exclusive)' },
};
const withPeriod = (properties: Record<string, unknown>, required: string[]) => ({
  type: 'object',
  required: ['range', 'from', 'to', ...required],
  properties: { ...period, ...properties },
});
const list = (name: string, item: string) =>
  withPeriod({ [name]: { type: 'array', items: ref(item) } }, [name]);

const share = { type: 'number', minimum: 0, maximum: 1 } as const;
const vitalRatings = ['good', 'needs-improvement', 'poor'] as const;
/** An object keyed by web vital (absent: no value in the period). */
const vitalsByName = (value: unknown) => ({
  type: 'object',
  properties: Object.fromEntries(webVitals.map((name) => [name, value])),
  additionalProperties: false,
});

const rangeParameter = {
  name: 'range',
  in: 'query',
  required: false,
  description:
    'The period: the last hour (5-minute buckets), 24 hours (1-hour buckets), 7 days (6-hour buckets) or 30 days (1-day buckets).',
  schema: { type: 'string', enum: RANGES, default: '24h' },
} as const;

const errors = {
  '400': { $ref: '#/components/responses/BadRequest' },
  '401': { $ref: '#/components/responses/Unauthorized' },
  '403': { $ref: '#/components/responses/Forbidden' },
};

function usageGet(summary: string, schema: string, parameters: unknown[] = [rangeParameter]) {
  return {
    get: {
      tags: ['usage'],
      summary,
      security: [{ bearer: [] }],
      parameters,
      responses: {
        '200': {
          description: 'OK (sent with Cache-Control: no-store)',
          content: { 'application/json': { schema: ref(schema) } },
        },
        ...errors,
      },
    },
  };
}

const tile = {
  type: 'object',
  required: ['value', 'previous', 'change'],
  properties: {
    value: count,
    previous: { ...count, description: 'The value over the previous period of equal length' },
    change: {
      type: ['number', 'null'],
      description: '(value − previous) / previous; null when previous is 0',
    },
  },
};
// verifiedUsers: signed-in users whose id this server issued (docs/decisions/0017).
const tiles = [
  'users',
  'signedInUsers',
  'verifiedUsers',
  'sessions',
  'pageViews',
  'exceptions',
  'failedCalls',
];

export const openApiDocument = {
  openapi: '3.1.0',
  info: {
    title: 'Gatehouse API',
    version: '0.1.0',
    description:
      'The product API. Every endpoint but this description needs a JWT access token from the configured provider (Authorization: Bearer); /usage needs the admin role.',
  },
  servers: [{ url: '/api' }],
  paths: {
    '/openapi.json': {
      get: {
        summary: 'This description',
        responses: { '200': { description: 'OpenAPI 3.1 document', content: { 'application/json': {} } } },
      },
    },
    '/me': {
      get: {
        summary: 'Who is calling',
        security: [{ bearer: [] }],
        responses: {
          '200': { description: 'OK', content: { 'application/json': { schema: ref('ApiUser') } } },
          '401': errors['401'],
        },
      },
    },
    '/telemetry-user': {
      get: {
        summary: "The caller's pseudonymous telemetry user id, issued and verifiable by this server",
        security: [{ bearer: [] }],
        responses: {
          '200': {
            description: 'OK',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['id'],
                  properties: { id: { type: 'string', pattern: '^[A-Za-z0-9_-]{24}$' } },
                },
              },
            },
          },
          '401': errors['401'],
        },
      },
    },
    '/usage/overview': usageGet(
      'Tiles for the period, against the previous period of equal length',
      'Overview',
    ),
    '/usage/timeseries': usageGet(
      'Per bucket: users, sessions, page views, exceptions, failed calls. Buckets are aligned to multiples of their width (UTC); the period ends at the end of the current bucket.',
      'Timeseries',
    ),
    '/usage/pages': usageGet(
      'Per page name: views, users, average and p95 duration (top 100 by views)',
      'Pages',
    ),
    '/usage/exceptions': usageGet(
      'Exceptions grouped by type, message and top stack frame (top 100 by count)',
      'Exceptions',
    ),
    '/usage/dependencies': usageGet(
      'Calls (ajax, fetch, dependencies) by target and name: count, failure rate, p50 and p95 duration (top 100)',
      'Dependencies',
    ),
    '/usage/sessions': usageGet('Sessions in the period, the latest start first', 'Sessions', [
      rangeParameter,
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: { type: 'integer', minimum: 1, maximum: SESSIONS_LIMIT_MAX, default: 50 },
      },
    ]),
    '/usage/experience': usageGet(
      "Web vitals (LCP, INP, CLS, FCP, TTFB) over the period: overall and per landing page (top 100), the p75 with Google's rating and the shares in each rating; and the p75 per chart bucket (aligned as the timeseries')",
      'Experience',
    ),
    '/usage/users/{id}/export': {
      get: {
        tags: ['usage'],
        summary: 'Every item stored for one user, as NDJSON envelopes (an access request)',
        security: [{ bearer: [] }],
        parameters: [{ $ref: '#/components/parameters/UserId' }],
        responses: {
          '200': {
            description:
              'One Application Insights envelope per line, oldest first; empty when nothing is stored (sent with Cache-Control: no-store and as an attachment)',
            content: { 'application/x-ndjson': { schema: { type: 'string' } } },
          },
          ...errors,
        },
      },
    },
    '/usage/users/{id}': {
      delete: {
        tags: ['usage'],
        summary:
          'Erases every item stored for one user, those not yet loaded from the journal included (an erasure request)',
        security: [{ bearer: [] }],
        parameters: [{ $ref: '#/components/parameters/UserId' }],
        responses: {
          '200': {
            description: 'How many items were erased (sent with Cache-Control: no-store)',
            content: {
              'application/json': {
                schema: {
                  type: 'object',
                  required: ['erased'],
                  properties: { erased: { ...count, description: 'Items erased' } },
                },
              },
            },
          },
          ...errors,
        },
      },
    },
    '/usage/sessions/{id}/timeline': (() => {
      const path = usageGet('One session’s items in time order (at most 1,000)', 'SessionTimeline', [
        {
          name: 'id',
          in: 'path',
          required: true,
          description: 'The session id (ai.session.id)',
          schema: { type: 'string', pattern: SESSION_ID_PATTERN },
        },
      ]);
      return {
        get: {
          ...path.get,
          responses: { ...path.get.responses, '404': { $ref: '#/components/responses/NotFound' } },
        },
      };
    })(),
  },
  components: {
    parameters: {
      UserId: {
        name: 'id',
        in: 'path',
        required: true,
        description:
          'A user id: the pseudonymous id of a signed-in user (ai.user.authUserId), or the SDK’s anonymous id (ai.user.id); items with either equal to it match',
        schema: { type: 'string', pattern: SESSION_ID_PATTERN },
      },
    },
    securitySchemes: { bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' } },
    responses: {
      BadRequest: {
        description: 'A parameter is invalid; the message names each bad one',
        content: { 'application/json': { schema: ref('Error') } },
      },
      Unauthorized: {
        description: 'No token, or an invalid one (see WWW-Authenticate)',
        content: { 'application/json': { schema: ref('Error') } },
      },
      Forbidden: {
        description: 'The token lacks the admin role',
        content: { 'application/json': { schema: ref('Error') } },
      },
      NotFound: {
        description: 'Nothing stored for it',
        content: { 'application/json': { schema: ref('Error') } },
      },
    },
    schemas: {
      Error: {
        type: 'object',
        required: ['error', 'message'],
        properties: { error: { type: 'string' }, message: { type: 'string' } },
      },
      ApiUser: {
        type: 'object',
        required: ['sub', 'name', 'email', 'roles', 'issuer', 'expiresAt', 'verifiedBy'],
        properties: {
          sub: { type: 'string' },
          name: text,
          email: text,
          roles: { type: 'array', items: { type: 'string' } },
          issuer: { type: 'string' },
          expiresAt: {
            type: ['integer', 'null'],
            description:
              "The access token's expiry, seconds since the epoch; null when the provider did not say",
          },
          verifiedBy: {
            type: 'string',
            enum: ['jwt', 'introspection', 'userinfo'],
            description: 'How the access token was checked: locally (JWT), or by asking the provider',
          },
        },
      },
      Tile: tile,
      Overview: withPeriod(
        {
          previousFrom: { ...time, description: 'Start of the previous period (which ends at from)' },
          tiles: {
            type: 'object',
            required: tiles,
            properties: Object.fromEntries(tiles.map((name) => [name, ref('Tile')])),
          },
        },
        ['previousFrom', 'tiles'],
      ),
      Timeseries: withPeriod(
        {
          bucketMs: { type: 'integer', description: 'Width of each bucket' },
          buckets: {
            type: 'array',
            description: 'Every bucket of the period, empty ones included',
            items: {
              type: 'object',
              required: ['start', 'users', 'sessions', 'pageViews', 'exceptions', 'failedCalls'],
              properties: {
                start: time,
                users: count,
                sessions: count,
                pageViews: count,
                exceptions: count,
                failedCalls: count,
              },
            },
          },
        },
        ['bucketMs', 'buckets'],
      ),
      Page: {
        type: 'object',
        required: ['name', 'views', 'users', 'avgDurationMs', 'p95DurationMs'],
        properties: {
          name: { type: 'string' },
          views: count,
          users: count,
          avgDurationMs: ms,
          p95DurationMs: ms,
        },
      },
      Pages: list('pages', 'Page'),
      ExceptionGroup: {
        type: 'object',
        required: [
          'type',
          'message',
          'topFrame',
          'problemId',
          'count',
          'usersAffected',
          'firstSeen',
          'lastSeen',
          'sampleStack',
        ],
        properties: {
          type: text,
          message: text,
          topFrame: text,
          problemId: text,
          count,
          usersAffected: count,
          firstSeen: time,
          lastSeen: time,
          sampleStack: { ...text, description: 'The stack of the latest occurrence' },
        },
      },
      Exceptions: list('exceptions', 'ExceptionGroup'),
      Dependency: {
        type: 'object',
        required: ['target', 'name', 'count', 'failures', 'failureRate', 'p50DurationMs', 'p95DurationMs'],
        properties: {
          target: text,
          name: text,
          count,
          failures: count,
          failureRate: { type: 'number', minimum: 0, maximum: 1 },
          p50DurationMs: ms,
          p95DurationMs: ms,
        },
      },
      Dependencies: list('dependencies', 'Dependency'),
      Session: {
        type: 'object',
        required: ['sessionId', 'user', 'authenticated', 'verified', 'start', 'lengthMs', 'pages', 'errors'],
        properties: {
          sessionId: { type: 'string' },
          user: {
            ...text,
            description: 'Pseudonymous authenticated user id if any, else the anonymous user id',
          },
          authenticated: { type: 'boolean' },
          verified: { type: 'boolean', description: 'The authenticated user id is one this server issued' },
          start: time,
          lengthMs: { ...count, description: 'First to last item of the session within the period' },
          pages: count,
          errors: { ...count, description: 'Exceptions and failed calls' },
        },
      },
      Sessions: list('sessions', 'Session'),
      TimelineItem: {
        type: 'object',
        required: [
          'time',
          'type',
          'name',
          'url',
          'operationId',
          'durationMs',
          'success',
          'resultCode',
          'target',
          'message',
        ],
        properties: {
          time,
          type: {
            type: 'string',
            description:
              'pageview, dependency, exception, event, trace, metric, request, pageviewperformance or availability',
          },
          name: text,
          url: text,
          operationId: text,
          durationMs: ms,
          success: { type: ['boolean', 'null'] },
          resultCode: text,
          target: text,
          message: text,
        },
      },
      VitalSummary: {
        type: 'object',
        required: ['count', 'p75', 'rating', 'good', 'needsImprovement', 'poor'],
        properties: {
          count,
          p75: { type: ['number', 'null'], description: 'Milliseconds, except CLS (a score)' },
          rating: { type: ['string', 'null'], enum: [...vitalRatings, null] },
          good: share,
          needsImprovement: share,
          poor: share,
        },
      },
      Experience: withPeriod(
        {
          overall: vitalsByName(ref('VitalSummary')),
          pages: {
            type: 'array',
            items: {
              type: 'object',
              required: ['page', 'vitals'],
              properties: { page: { type: 'string' }, vitals: vitalsByName(ref('VitalSummary')) },
            },
          },
          bucketMs: count,
          trend: {
            type: 'array',
            items: {
              type: 'object',
              required: ['start', 'p75'],
              properties: { start: time, p75: vitalsByName({ type: ['number', 'null'] }) },
            },
          },
        },
        ['overall', 'pages', 'bucketMs', 'trend'],
      ),
      SessionTimeline: {
        type: 'object',
        required: ['sessionId', 'user', 'authenticated', 'verified', 'items', 'truncated'],
        properties: {
          sessionId: { type: 'string' },
          user: text,
          authenticated: { type: 'boolean' },
          verified: { type: 'boolean', description: 'The authenticated user id is one this server issued' },
          items: { type: 'array', items: ref('TimelineItem') },
          truncated: { type: 'boolean', description: 'More than 1,000 items: only the first are listed' },
        },
      },
    },
  },
} as const;

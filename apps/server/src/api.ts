import { createOpenApiDocument, endpoints } from '@gatehouse/api-contract';
import {
  dashboardQueries,
  type AnnotationQueries,
  type Dashboard,
  type UsageQueries,
} from '@gatehouse/collector';
import { annotationHandlers } from './annotations.js';
import type express from 'express';
import { createApiRouter, type ApiHandlers, type ApiRouterOptions } from './api-router.js';
import type { TokenVerifier } from './auth/token-verifier.js';
import type { TelemetryUserIds } from './telemetry-user-id.js';
import { dashboardHandlers } from './dashboard.js';
import { usageHandlers, type UsageSource } from './usage.js';

/** What the API's handlers are given beyond the caller's token: declared once, passed through by createApp. */
export interface ApiDependencies {
  /** Issues and verifies the pseudonymous telemetry user ids; without it /api/telemetry-user answers 404. */
  telemetryUserIds?: TelemetryUserIds | undefined;
  /** The usage dashboard's queries (the built-in collector's); without them /api/usage answers 404. */
  usage?: UsageQueries | undefined;
  /** The dashboard panels' registered queries, on the same source (the collector's, or Log Analytics'). */
  dashboard?: Dashboard | undefined;
  /** Where those queries read (the local store, or a Log Analytics workspace); the overview says it. */
  usageSource?: UsageSource | undefined;
  /** The admins' annotations, in the telemetry store (this process's or the store holder's). */
  annotations?: AnnotationQueries | undefined;
}

export interface ApiOptions extends ApiRouterOptions, ApiDependencies {
  verify: TokenVerifier;
}

/**
 * Every endpoint of /api and its handler, in one table: the contract (@gatehouse/api-contract) says
 * what each takes and answers and who may call it; api-router.ts serves them all the one way. To add
 * an endpoint: its entry in the contract's endpoints.ts, its handler here (or in its feature's file,
 * spread in like usageHandlers). A contract endpoint left out here is a type error and a refusal to
 * start.
 */
export function apiHandlers(options: ApiOptions): ApiHandlers {
  const { verify, telemetryUserIds: userIds, usage, annotations } = options;
  const openApiDocument = createOpenApiDocument();
  return {
    openapi: (_call, res) => void res.json(openApiDocument),
    // Access tokens often lack name and email (Glewlwyd's, Entra's without optional claims): ask userinfo.
    me: ({ caller }) => verify.withProfile(caller.user, caller.accessToken),
    // Per session, from the token: the SPA never computes it, so it cannot be forged nor reversed there.
    telemetryUser: userIds ? ({ caller: { user } }) => ({ id: userIds.idFor(user.issuer, user.sub) }) : null,
    ...usageHandlers(
      usage && {
        queries: usage,
        source: options.usageSource,
        isVerifiedUser: (id) => userIds?.isVerified(id) ?? false,
        authoredAnnotations: annotations && ((user) => annotations.annotationsBy(user)),
      },
    ),
    ...dashboardHandlers(endpoints, dashboardQueries, usage && options.dashboard),
    ...annotationHandlers({
      annotations,
      logAnalytics: options.usageSource?.kind === 'log-analytics',
      userIds,
    }),
  };
}

/** The product API's routes (mounted at /api by api-mount.ts). */
export function createApi(options: ApiOptions): express.Router {
  return createApiRouter(endpoints, apiHandlers(options), options);
}

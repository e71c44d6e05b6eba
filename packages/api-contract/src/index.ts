export { accessLevels, ADMIN_ROLE, mayAccess, roleFor } from './access.js';
export type { Access } from './access.js';
export { endpoints } from './endpoints.js';
export type {
  BodyOf,
  Contract,
  Endpoint,
  EndpointAt,
  EndpointName,
  Endpoints,
  Method,
  ParamsOf,
  PathsOf,
  QueryOf,
  RequestOf,
  ResponseOf,
} from './endpoints.js';
export { errorBody, errorBodySchema, errorCodes, errorCodeSchema } from './errors.js';
export type { ErrorBody, ErrorCode } from './errors.js';
export { apiUserSchema, telemetryUserSchema, tokenChecks } from './me.js';
export type { ApiUser, TelemetryUser, TokenCheck } from './me.js';
export { createOpenApiDocument } from './openapi.js';
export { readRoles } from './roles.js';
export { optionalScopeIn, requestedScope } from './requested-scope.js';
export { issuesSentence, namedIssues } from './issues.js';
export { runtimeConfigSchema } from './runtime-config.js';
export type { RuntimeConfig } from './runtime-config.js';
export type { NamedIssue } from './issues.js';
export { FUNNEL_STEP_NAME_MAX, FUNNEL_STEPS, funnelStepKinds, funnelStepsProblem } from './funnel-rules.js';
export type { FunnelStep, FunnelStepKind } from './funnel-rules.js';
export type { OpenApiDocument } from './openapi.js';
export * from './usage.js';
export * from './analytics.js';
export * from './annotations.js';
export * from './sign-in-events.js';

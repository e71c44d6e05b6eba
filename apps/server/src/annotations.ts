import type { AnnotationQueries, StoredAnnotation } from '@gatehouse/collector';
import { NotAvailableError } from '@gatehouse/collector';
import type { ApiHandlers } from './api-router.js';
import type { TelemetryUserIds } from './telemetry-user-id.js';

export interface AnnotationHandlersOptions {
  /** The store's annotations (this process's, or the store holder's); undefined when there is no store. */
  annotations: AnnotationQueries | undefined;
  /** Whether the dashboard reads Azure Monitor: then a missing store is a 501 with its reason, not a 404. */
  logAnalytics: boolean;
  /** Gives the admin's pseudonymous user id: the author, as the per-user export and erasure name it. */
  userIds: TelemetryUserIds | undefined;
}

const WITHOUT_STORE =
  "Annotations are kept in Gatehouse's own telemetry store, and this server reads Azure Monitor without one: keep a local copy (TELEMETRY_RELAY_LOCAL_COPY=1) or point it at the store holder (COLLECTOR_URL) to use them (docs/annotations.md).";

/**
 * The annotation endpoints (docs/annotations.md): admins only, as every usage endpoint (the contract's
 * `access`). The author is the caller's pseudonymous id, derived from the verified token, never taken
 * from the request; notes are never logged.
 */
export function annotationHandlers({
  annotations,
  logAnalytics,
  userIds,
}: AnnotationHandlersOptions): Pick<ApiHandlers, 'annotations' | 'createAnnotation' | 'deleteAnnotation'> {
  if (!userIds || (!annotations && !logAnalytics))
    return { annotations: null, createAnnotation: null, deleteAnnotation: null };
  const store = (): AnnotationQueries => {
    if (!annotations) throw new NotAvailableError(WITHOUT_STORE);
    return annotations;
  };
  const authorOf = (user: { issuer: string; sub: string }) => userIds.idFor(user.issuer, user.sub);
  const shown = (mine: string) => (a: StoredAnnotation) => ({ ...a, mine: a.author === mine });
  return {
    annotations: async ({ query, caller }) => {
      const answer = await store().listAnnotations(query);
      return { ...answer, annotations: answer.annotations.map(shown(authorOf(caller.user))) };
    },
    createAnnotation: async ({ body, caller }) => {
      const author = authorOf(caller.user);
      const time = new Date(Date.parse(body.time)).toISOString();
      return shown(author)(await store().addAnnotation({ time, note: body.note, author }));
    },
    deleteAnnotation: async ({ params: { id } }) => {
      const deleted = await store().deleteAnnotation(id);
      return deleted && { deleted: deleted.id };
    },
  };
}

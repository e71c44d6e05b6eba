import type { TokenCredential } from '@azure/identity';
import type { Row, RunQuery } from './log-analytics-queries.js';

/** Why a Log Analytics query gave no answer: a stable code, and the service's words when it said any. */
export class LogAnalyticsError extends Error {
  override readonly name = 'LogAnalyticsError';
  constructor(
    readonly code: 'throttled' | 'timeout' | 'partial' | 'refused' | 'unreachable',
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface LogAnalyticsOptions {
  workspaceId: string;
  /**
   * A Microsoft Entra credential with the workspace's "Log Analytics Reader" role. Default:
   * DefaultAzureCredential (a managed identity on Azure, AZURE_CLIENT_ID picking a user-assigned one;
   * else workload identity, the environment's service principal, or a developer's Azure CLI sign-in).
   */
  credential?: TokenCredential;
  /** The query API's base URL. Default: Azure public cloud's, https://api.loganalytics.io/v1. */
  endpoint?: string;
  /** How long one query may take, client side. Default 30 s (the service also stops at this). */
  timeoutMs?: number;
  /** Retries of a throttled (429) or failing (5xx) request, honouring Retry-After. Default 2. */
  maxRetries?: number;
  /** Certificates to trust besides the system's (a test's loopback server). */
  ca?: Buffer | string;
}

/**
 * Runs KQL against a workspace with Microsoft's client (@azure/monitor-query-logs: the API's
 * tables/columns/rows format, https://learn.microsoft.com/azure/azure-monitor/logs/api/response-format).
 * A partial result (the service answers 200 with an `error` beside the tables: a query over its limits,
 * a workspace of several regions with one away) is refused rather than shown as if whole: a dashboard
 * tile that silently counts half is worse than one that says it could not count.
 */
export async function logAnalyticsRunner(options: LogAnalyticsOptions): Promise<RunQuery> {
  // Loaded only when a workspace is configured: the Azure SDK is not needed otherwise.
  const { LogsQueryClient, LogsQueryResultStatus } = await import('@azure/monitor-query-logs');
  const timeoutMs = options.timeoutMs ?? 30_000;
  const credential = options.credential ?? new (await import('@azure/identity')).DefaultAzureCredential();
  const client = new LogsQueryClient(credential, {
    ...(options.endpoint ? { endpoint: options.endpoint } : {}),
    retryOptions: { maxRetries: options.maxRetries ?? 2, maxRetryDelayInMs: 10_000 },
    ...(options.ca ? { tlsOptions: { ca: options.ca } } : {}),
  });
  return async (query, from, to) => {
    let result;
    try {
      result = await client.queryWorkspace(
        options.workspaceId,
        query,
        { startTime: new Date(from), endTime: new Date(to) },
        { serverTimeoutInSeconds: Math.ceil(timeoutMs / 1000), requestOptions: { timeout: timeoutMs } },
      );
    } catch (error) {
      throw describe(error);
    }
    if (result.status === LogsQueryResultStatus.PartialFailure) {
      throw new LogAnalyticsError(
        'partial',
        `Log Analytics answered only in part: ${result.partialError.code}: ${result.partialError.message}`,
      );
    }
    const table = result.tables[0];
    if (!table) return [];
    const names = table.columnDescriptors.map((c) => c.name ?? '');
    return table.rows.map((cells) => {
      const row: Row = {};
      cells.forEach((cell, i) => {
        row[names[i] ?? String(i)] = cell;
      });
      return row;
    });
  };
}

function describe(error: unknown): LogAnalyticsError {
  const e = error as { statusCode?: number; code?: string; name?: string; message?: string };
  const service = e.message ? `: ${e.message.slice(0, 300)}` : '';
  if (e.statusCode === 429) {
    return new LogAnalyticsError(
      'throttled',
      `Log Analytics is throttling this workspace's queries${service}`,
      {
        cause: error,
      },
    );
  }
  if (
    e.name === 'AbortError' ||
    (e.code === 'REQUEST_SEND_ERROR' && /timeout|aborted/i.test(e.message ?? ''))
  ) {
    return new LogAnalyticsError('timeout', 'Log Analytics did not answer in time.', { cause: error });
  }
  if (e.statusCode !== undefined) {
    return new LogAnalyticsError('refused', `Log Analytics refused the query (${e.statusCode})${service}`, {
      cause: error,
    });
  }
  return new LogAnalyticsError('unreachable', `Log Analytics could not be reached${service}`, {
    cause: error,
  });
}

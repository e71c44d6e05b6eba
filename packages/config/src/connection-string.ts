/**
 * Azure Monitor connection strings (`InstrumentationKey=…;IngestionEndpoint=…`): keys are
 * case-insensitive, values are not. https://learn.microsoft.com/azure/azure-monitor/app/connection-strings
 */

/** Where a connection string without `IngestionEndpoint` sends (the SDKs' default). */
export const DEFAULT_INGESTION_ENDPOINT = 'https://dc.services.visualstudio.com';

/** The fields of a connection string, keys lower-cased. */
export function parseConnectionString(value: string): Record<string, string> {
  const fields: Record<string, string> = {};
  for (const part of value.split(';')) {
    const at = part.indexOf('=');
    if (at > 0) fields[part.slice(0, at).trim().toLowerCase()] = part.slice(at + 1).trim();
  }
  return fields;
}

export interface IngestionTarget {
  /** The resource's instrumentation key: every forwarded envelope carries it, whatever the sender wrote. */
  iKey: string;
  /** `<IngestionEndpoint>/v2.1/track`, the batch endpoint the SDKs post to. */
  trackUrl: string;
}

/** The relay's destination, from the configured connection string only (never from what a sender wrote). */
export function ingestionTarget(connectionString: string): IngestionTarget {
  const fields = parseConnectionString(connectionString);
  const iKey = fields.instrumentationkey;
  if (!iKey) throw new TypeError('The connection string has no InstrumentationKey.');
  const endpoint = new URL(fields.ingestionendpoint || DEFAULT_INGESTION_ENDPOINT);
  if (endpoint.protocol !== 'https:' && endpoint.protocol !== 'http:') {
    throw new TypeError('The IngestionEndpoint must be an http(s) URL.');
  }
  const base = endpoint.href.replace(/\/+$/, '');
  return { iKey, trackUrl: `${base}/v2.1/track` };
}

/**
 * The instrumentation key of the built-in collector. Not a secret: it only tells the collector that an
 * envelope is meant for this Gatehouse. The server's default connection string names it; tests and
 * benchmarks that post to the built-in collector take it from here.
 */
export const LOCAL_INSTRUMENTATION_KEY = '4a7e4005-6a7e-4b0e-8d5e-000000000001';

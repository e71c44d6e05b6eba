/** The telemetry kinds, as stored and as `--type` of the export command names them. */
export const telemetryTypes = [
  'pageview',
  'exception',
  'dependency',
  'event',
  'metric',
  'trace',
  'request',
  'pageviewperformance',
  'availability',
] as const;
export type TelemetryType = (typeof telemetryTypes)[number];

export {
  DEFAULT_INGESTION_ENDPOINT,
  ingestionTarget,
  LOCAL_INSTRUMENTATION_KEY,
  parseConnectionString,
} from './connection-string.js';
export type { IngestionTarget } from './connection-string.js';
export { COLLECTOR_DEFAULTS, environment, LOG_LEVELS } from './environment.js';
export type { Environment, LogLevelName } from './environment.js';
export { ConfigError, readEnvironment } from './read-environment.js';

import { namedIssues, runtimeConfigSchema, type RuntimeConfig } from '@gatehouse/api-contract';
import { configElementText } from './config-element';

// The schema is shared with the server, which writes this configuration (packages/api-contract).
export type { RuntimeConfig };

export class RuntimeConfigError extends Error {
  readonly code = 'runtime_config_invalid';
}

/** Reads and validates the configuration element; names every invalid key at once. */
export function readRuntimeConfig(doc: Document = document): RuntimeConfig {
  return parseRuntimeConfig(configElementText(doc));
}

/**
 * The configuration as the server wrote it into the app's HTML, for a worker (which has no document): the
 * element's text, validated as readRuntimeConfig does.
 */
export function runtimeConfigFromHtml(html: string): RuntimeConfig {
  const element = /<script id="gatehouse-config" type="application\/json"[^>]*>([\s\S]*?)<\/script>/.exec(
    html,
  );
  return parseRuntimeConfig(element?.[1] ?? '');
}

function parseRuntimeConfig(text: string): RuntimeConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    throw new RuntimeConfigError('The runtime configuration is not valid JSON.', { cause });
  }
  const result = runtimeConfigSchema.safeParse(raw);
  if (!result.success) {
    const keys = namedIssues(result.error.issues, { whole: '(root)', unknownKey: 'a setting' });
    throw new RuntimeConfigError(
      `The runtime configuration is invalid: ${keys.map(({ name, message }) => `${name}: ${message}`).join('; ')}`,
    );
  }
  return result.data;
}

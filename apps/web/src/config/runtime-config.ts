import { namedIssues, runtimeConfigSchema, type RuntimeConfig } from '@gatehouse/api-contract';

// The schema is shared with the server, which writes this configuration (packages/api-contract).
export type { RuntimeConfig };

export class RuntimeConfigError extends Error {
  readonly code = 'runtime_config_invalid';
}

/** Reads and validates the configuration element; names every invalid key at once. */
export function readRuntimeConfig(doc: Document = document): RuntimeConfig {
  const text = doc.getElementById('gatehouse-config')?.textContent ?? '';
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

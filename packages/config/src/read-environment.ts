import { namedIssues } from '@gatehouse/api-contract';
import type { z } from 'zod';

/** The configuration is invalid: the message names every bad key, one a line. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
  readonly code = 'config_invalid';
}

/**
 * Parses `env` with `schema` (the shared `environment`, or the keys a process picks from it). An empty
 * value counts as unset, so its default applies. Throws one ConfigError naming every invalid key, so a
 * misconfigured start shows all its problems at once: `<program> cannot start: …`.
 */
export function readEnvironment<S extends z.ZodType>(
  schema: S,
  env: Readonly<Record<string, string | undefined>>,
  program: string,
): z.output<S> {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value.trim() !== ''),
  );
  const result = schema.safeParse(present);
  if (result.success) return result.data;
  const lines = namedIssues(result.error.issues, { whole: '(environment)', unknownKey: 'a setting' }).map(
    ({ name, message }) => `  - ${name}: ${message}`,
  );
  throw new ConfigError(`${program} cannot start: the configuration is invalid.\n${lines.join('\n')}`);
}

import * as z from 'zod/mini';

/**
 * The public runtime configuration the server embeds in index.html (one build, many environments).
 * It never holds secrets: everything here is visible to every visitor.
 */
export const runtimeConfigSchema = z.object({
  oidc: z.object({
    authority: z.url(),
    clientId: z.string().check(z.minLength(1)),
    scope: z.string().check(z.minLength(1)),
    rolesClaim: z.string().check(z.minLength(1)),
    tokenStore: z.enum(['session', 'memory']),
    extraQueryParams: z.record(z.string(), z.string()),
  }),
  telemetry: z.object({
    /** Where the SDK posts: Azure Monitor, or this server's own collector. */
    connectionString: z.string().check(z.minLength(1)),
    /** `ask` shows the consent banner; `implied` means the deployment does not need one. */
    consent: z.enum(['ask', 'implied']),
  }),
});

export type RuntimeConfig = z.infer<typeof runtimeConfigSchema>;

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
    const keys = result.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`);
    throw new RuntimeConfigError(`The runtime configuration is invalid: ${keys.join('; ')}`);
  }
  return result.data;
}

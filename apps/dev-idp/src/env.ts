import { z } from 'zod';

/** Settings the CLI reads from its environment. */
export interface DevIdpEnv {
  port: number;
  appOrigin: string;
  testControls: boolean;
  testControlsSecret: string | undefined;
  accessTokenTtlSeconds: number | undefined;
}

function isHttpOrigin(value: string): boolean {
  const url = URL.canParse(value) ? new URL(value) : undefined;
  return (url?.protocol === 'http:' || url?.protocol === 'https:') && url.origin === value.replace(/\/$/, '');
}

const EnvSchema = z.object({
  IDP_PORT: z.coerce
    .number({ error: 'must be a port number' })
    .int('must be a port number')
    .min(0, 'must be between 0 and 65535')
    .max(65_535, 'must be between 0 and 65535')
    .default(3001),
  APP_ORIGIN: z
    .string()
    .refine(isHttpOrigin, {
      error: 'must be an http(s) origin such as http://localhost:3000, without a path',
    })
    .transform((value) => new URL(value).origin)
    .default('http://localhost:3000'),
  DEV_IDP_TEST_CONTROLS: z.enum(['0', '1'], { error: 'must be 1 (enabled) or 0 (disabled)' }).default('0'),
  DEV_IDP_TEST_CONTROLS_SECRET: z.string().min(16, 'must be at least 16 characters long').optional(),
  DEV_IDP_ACCESS_TOKEN_TTL: z.coerce
    .number({ error: 'must be a number of seconds' })
    .int('must be a whole number of seconds')
    .min(1, 'must be at least 1 second')
    .optional(),
});

export class InvalidEnvError extends Error {
  override name = 'InvalidEnvError';
}

/**
 * Parses the CLI's settings. Empty values count as unset. Throws one InvalidEnvError naming every invalid key,
 * so a misconfigured start shows all problems at once.
 */
export function readDevIdpEnv(env: Readonly<Record<string, string | undefined>>): DevIdpEnv {
  const present = Object.fromEntries(
    Object.entries(env).filter(([, value]) => value !== undefined && value !== ''),
  );
  const result = EnvSchema.safeParse(present);
  if (!result.success) {
    const problems = result.error.issues.map((issue) => `${issue.path.join('.')} ${issue.message}`);
    throw new InvalidEnvError(`dev-idp: invalid environment: ${problems.join('; ')}`);
  }
  const settings = result.data;
  return {
    port: settings.IDP_PORT,
    appOrigin: settings.APP_ORIGIN,
    testControls: settings.DEV_IDP_TEST_CONTROLS === '1',
    testControlsSecret: settings.DEV_IDP_TEST_CONTROLS_SECRET,
    accessTokenTtlSeconds: settings.DEV_IDP_ACCESS_TOKEN_TTL,
  };
}

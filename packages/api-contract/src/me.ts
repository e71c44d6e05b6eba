import { z } from 'zod';

/** How the server checked the access token: locally (a JWT), or by asking the provider. */
export const tokenChecks = ['jwt', 'introspection', 'userinfo'] as const;

/** `GET /api/me`: the caller as the API sees them. */
export const apiUserSchema = z
  .strictObject({
    sub: z.string(),
    name: z.string().nullable(),
    email: z.string().nullable(),
    roles: z.array(z.string()),
    issuer: z.string(),
    expiresAt: z.int().nullable().meta({
      description: "The access token's expiry, seconds since the epoch; null when the provider did not say",
    }),
    verifiedBy: z.enum(tokenChecks).meta({
      description: 'How the access token was checked: locally (JWT), or by asking the provider',
    }),
  })
  .meta({ id: 'ApiUser' });

export type ApiUser = z.infer<typeof apiUserSchema>;
export type TokenCheck = ApiUser['verifiedBy'];

/** `GET /api/telemetry-user`: the caller's pseudonymous telemetry user id (docs/decisions/0017). */
export const telemetryUserSchema = z
  .strictObject({ id: z.string().regex(/^[A-Za-z0-9_-]{24}$/) })
  .meta({ id: 'TelemetryUser' });

export type TelemetryUser = z.infer<typeof telemetryUserSchema>;

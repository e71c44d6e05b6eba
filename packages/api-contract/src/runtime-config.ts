// zod/mini: the SPA parses this at start, and its bundle stays small.
import * as z from 'zod/mini';

/**
 * The public runtime configuration the server embeds in index.html (one build, many environments): the
 * server writes it (`publicConfig`, typed by this schema) and the SPA reads it with this schema. It never
 * holds secrets: everything here is visible to every visitor.
 */
export const runtimeConfigSchema = z.object({
  oidc: z.object({
    /**
     * Who is the OAuth client: `browser`, the token vault in the browser (a public client); `bff`, this
     * server (a confidential client), and the browser holds only a session cookie.
     */
    mode: z.enum(['browser', 'bff']),
    authority: z.url(),
    clientId: z.string().check(z.minLength(1)),
    scope: z.string().check(z.minLength(1)),
    rolesClaim: z.string().check(z.minLength(1)),
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

import { environment, readEnvironment } from '@gatehouse/config';

/** Settings the CLI reads from its environment. */
export interface DevIdpEnv {
  port: number;
  appOrigin: string;
  testControls: boolean;
  testControlsSecret: string | undefined;
  accessTokenTtlSeconds: number | undefined;
  /** The app is a confidential client with this secret (Gatehouse's BFF mode); unset: a public client. */
  clientSecret: string | undefined;
}

/** The keys the provider's own command reads, with the rules and defaults every Gatehouse process shares. */
const devIdpEnvironment = environment.pick({
  IDP_PORT: true,
  APP_ORIGIN: true,
  DEV_IDP_TEST_CONTROLS: true,
  DEV_IDP_TEST_CONTROLS_SECRET: true,
  DEV_IDP_ACCESS_TOKEN_TTL: true,
  OIDC_CLIENT_SECRET: true,
});

/**
 * Parses the CLI's settings. Empty values count as unset. Throws one ConfigError naming every invalid key,
 * so a misconfigured start shows all problems at once.
 */
export function readDevIdpEnv(env: Readonly<Record<string, string | undefined>>): DevIdpEnv {
  const settings = readEnvironment(devIdpEnvironment, env, 'dev-idp');
  return {
    port: settings.IDP_PORT,
    appOrigin: settings.APP_ORIGIN,
    testControls: settings.DEV_IDP_TEST_CONTROLS,
    testControlsSecret: settings.DEV_IDP_TEST_CONTROLS_SECRET,
    accessTokenTtlSeconds: settings.DEV_IDP_ACCESS_TOKEN_TTL,
    clientSecret: settings.OIDC_CLIENT_SECRET,
  };
}

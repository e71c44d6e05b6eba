/** What the Node.js SDK tests pass to trackAvailability (both SDKs take the same shape). */
export const availabilityProbe = {
  id: 'run-1',
  name: 'sign-in probe',
  duration: 1500,
  success: false,
  runLocation: 'eu-west',
  message: 'token endpoint timed out',
};

/**
 * The environment of a child process running the Node.js SDK 3.x (`sdk3-child.mjs`): it trusts the
 * test's self-signed certificate, persists refused batches under `tmpDir` (the exporter uses
 * os.tmpdir()), and reports nothing to Microsoft's endpoints (Statsbeat, SDK stats).
 */
export function sdk3ChildEnv(certFile: string, tmpDir: string): NodeJS.ProcessEnv {
  return {
    ...process.env,
    NODE_EXTRA_CA_CERTS: certFile,
    TMPDIR: tmpDir,
    APPLICATION_INSIGHTS_NO_STATSBEAT: 'true',
    APPLICATIONINSIGHTS_STATSBEAT_DISABLED: 'true',
    APPLICATIONINSIGHTS_SDKSTATS_DISABLED: 'true',
  };
}

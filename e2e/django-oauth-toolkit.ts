import { spawn, type ChildProcess } from 'node:child_process';
import { expect } from '@playwright/test';

/** The confidential client's secret scripts/django-oauth-toolkit.mjs registers for a BFF origin. */
export const DOT_BFF_SECRET = 'gatehouse-bff-development-secret';

/**
 * Starts Django OAuth Toolkit (scripts/django-oauth-toolkit.mjs) on `port`, with the public client
 * `gatehouse` for `appOrigin` and, given `bffOrigin`, the confidential client `gatehouse-bff` for a
 * Gatehouse in BFF mode there; resolves once its discovery document answers.
 */
export async function startDjangoOAuthToolkit(options: {
  port: number;
  appOrigin: string;
  bffOrigin?: string;
  accessTokenTtl?: number;
}): Promise<ChildProcess> {
  const child = spawn(
    process.execPath,
    [
      'scripts/django-oauth-toolkit.mjs',
      '--port',
      String(options.port),
      '--app-origin',
      options.appOrigin,
      ...(options.accessTokenTtl ? ['--access-token-ttl', String(options.accessTokenTtl)] : []),
      ...(options.bffOrigin ? ['--bff-origin', options.bffOrigin] : []),
    ],
    { stdio: ['ignore', 'ignore', 'pipe'] },
  );
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  await expect
    .poll(
      async () => {
        if (child.exitCode !== null) throw new Error(`Django OAuth Toolkit exited:\n${stderr}`);
        return fetch(`http://localhost:${options.port}/o/.well-known/openid-configuration`).then(
          (response) => response.status,
          () => 0,
        );
      },
      { timeout: 60_000, message: 'Django OAuth Toolkit answers discovery' },
    )
    .toBe(200);
  return child;
}

export async function stopDjangoOAuthToolkit(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGINT');
  await exited;
}

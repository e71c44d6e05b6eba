import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const repo = fileURLToPath(new URL('../../../', import.meta.url));

describe('npm run dev', () => {
  it('refuses to start with NODE_ENV=production, in one line, and exits non-zero', () => {
    // As `npm run dev` starts it; refused before it starts anything (a provider, a build, a server).
    const run = spawnSync(
      process.execPath,
      ['node_modules/tsx/dist/cli.mjs', '--conditions=@gatehouse/source', 'apps/server/src/dev.ts'],
      {
        cwd: repo,
        env: {
          ...process.env,
          NODE_ENV: 'production',
          OIDC_AUTHORITY: 'https://idp.example.com',
          OIDC_CLIENT_ID: 'gatehouse',
        },
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    expect(run.status).toBe(1);
    expect(run.stderr.trim()).toMatch(
      /^Gatehouse cannot start: --dev \(npm run dev\) [^\n]*npm start[^\n]*$/,
    );
    expect(run.stdout).toBe('');
  });
});

import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Request, Response } from 'express';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { loadConfig } from './config.js';
import { DevWeb, devDeniedPaths } from './dev-web.js';

const repo = fileURLToPath(new URL('../../../', import.meta.url));
// Inside the repository, which Vite serves by default (its workspace root): a data folder where the
// default ./data would be, beside files that nothing denies.
const scratch = mkdtempSync(join(repo, '.dev-web-test-'));
const dataDir = join(scratch, 'data');
// A name with glob syntax in it is taken as it is spelled.
const otherDataDir = join(scratch, 'data (copy) [1]');
for (const dir of [dataDir, otherDataDir]) {
  mkdirSync(dir);
  writeFileSync(join(dir, 'telemetry-user-id.key'), 'secret key');
  writeFileSync(join(dir, 'telemetry.duckdb'), 'every telemetry item');
}
writeFileSync(join(scratch, '.env'), 'SECRET=1');
writeFileSync(join(scratch, 'notes.txt'), 'nothing secret');

const devWeb = new DevWeb(new URL('../../web/', import.meta.url), [dataDir, otherDataDir]);
const server = http.createServer((req, res) =>
  devWeb.handle(req as Request, res as unknown as Response, () => {
    res.statusCode = 404;
    res.end();
  }),
);
let origin = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  await devWeb.listening(server);
});

afterAll(async () => {
  await devWeb.close();
  await new Promise((resolve) => server.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

/** Vite's answer to `/@fs/<path>`: its status and, when served, the text. */
async function viaFs(path: string): Promise<{ status: number; text: string }> {
  const response = await fetch(`${origin}/@fs${path}`);
  return { status: response.status, text: await response.text() };
}

describe('the development server (Vite, as dev-web.ts makes it)', () => {
  it('refuses the data folder, key files and .env through /@fs/, and serves the sources', async () => {
    // Vite logs each refusal as an error: expected here.
    const refusals: string[] = [];
    vi.mocked(console.error).mockImplementation((message: unknown) => void refusals.push(String(message)));

    for (const dir of [dataDir, otherDataDir])
      for (const file of ['telemetry-user-id.key', 'telemetry.duckdb']) {
        const answer = await viaFs(join(dir, file));
        expect(answer.status, join(dir, file)).toBe(403);
        expect(answer.text).not.toMatch(/secret key|every telemetry item/);
      }
    // Vite's own denials stay in force beside the data folder's.
    expect((await viaFs(join(scratch, '.env'))).status).toBe(403);
    expect(refusals.join('\n')).toMatch(/outside of Vite serving allow list/);

    expect(await viaFs(join(scratch, 'notes.txt'))).toMatchObject({ status: 200, text: 'nothing secret' });
    const source = await viaFs(join(repo, 'apps/web/src/features/usage/format.ts'));
    expect(source.status).toBe(200);
    expect(source.text).toMatch(/export (const|function) format/);
  });

  it('is denied the data folder and the TLS key, wherever they are configured', () => {
    expect(devDeniedPaths(loadConfig({}))).toEqual([resolve('data')]);
    const config = loadConfig({
      GATEHOUSE_DATA_DIR: '/srv/gh',
      TLS_CERT_FILE: 'tls/c.pem',
      TLS_KEY_FILE: 'tls/k',
    });
    expect(devDeniedPaths(config)).toEqual(['/srv/gh', resolve('tls/k')]);
  });
});

import { mkdtemp, mkdir, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { brotliCompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApp, embedJson, PERMISSIONS_POLICY } from './app.js';
import { loadConfig } from './config.js';
import { Readiness } from './health.js';
import { startLoopbackProvider } from './test-support/loopback-provider.js';
import { asErrorBody } from './test-support/contract.js';
import { captureLogs } from './test-support/logs.js';

const ASSET = 'console.log("gatehouse");'.repeat(100);
const logs = captureLogs();
let server: Server;
let base: string;

beforeAll(async () => {
  const webRoot = await mkdtemp(join(tmpdir(), 'gatehouse-web-'));
  await mkdir(join(webRoot, 'assets'));
  await writeFile(
    join(webRoot, 'index.html'),
    '<html><head><script id="gatehouse-config" type="application/json">\n{}\n</script></head>' +
      '<body><div id="root"><header>Gatehouse</header><main><!-- home --><h1>Welcome</h1><!-- /home --></main></div></body></html>',
  );
  await writeFile(join(webRoot, 'assets', 'app-abc123.js'), ASSET);
  await writeFile(join(webRoot, 'assets', 'app-abc123.js.br'), brotliCompressSync(ASSET));
  await writeFile(join(webRoot, 'assets', 'app-abc123.js.map'), '{"version":3}');
  await writeFile(join(webRoot, 'main.js.map'), '{"version":3}');
  await writeFile(join(webRoot, 'index.html.br'), brotliCompressSync('<html></html>'));
  const config = loadConfig({
    OIDC_AUTHORITY: 'http://127.0.0.1:9',
    OIDC_CLIENT_ID: 'gatehouse',
    APPLICATIONINSIGHTS_CONNECTION_STRING:
      'InstrumentationKey=k;IngestionEndpoint=https://ingest.example.com/',
  });
  const app = createApp({
    config,
    authority: 'http://127.0.0.1:9',
    webRoot: pathToFileURL(`${webRoot}/`),
    logger: logs.logger,
    fetchImpl: () => Promise.reject(new TypeError('fetch failed')),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

describe('the app server', () => {
  it('serves the SPA for any page with the public configuration embedded as data', async () => {
    const response = await fetch(`${base}/profile`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    const html = await response.text();
    const json =
      /<script id="gatehouse-config" type="application\/json">(.*?)<\/script>/s.exec(html)?.[1] ?? '';
    expect(JSON.parse(json)).toEqual({
      oidc: {
        mode: 'browser',
        authority: 'http://127.0.0.1:9',
        clientId: 'gatehouse',
        scope: 'openid profile email offline_access',
        rolesClaim: 'roles',
        extraQueryParams: {},
      },
      telemetry: {
        connectionString: 'InstrumentationKey=k;IngestionEndpoint=https://ingest.example.com/',
        consent: 'ask',
      },
    });
    expect(response.headers.get('cache-control')).toBe('no-store');
  });

  it('sends the static first render with the home page on / only, the header on every path', async () => {
    const page = async (path: string) =>
      (await fetch(`${base}${path}`, { headers: { accept: 'text/html' } })).text();
    expect(await page('/')).toContain('<main><!-- home --><h1>Welcome</h1><!-- /home --></main>');
    for (const path of ['/profile', '/usage/sessions/x', '/callback', '/no-such-page']) {
      expect(await page(path)).toContain('<div id="root"><header>Gatehouse</header><main></main></div>');
    }
  });

  it('sends a strict CSP naming only the app, the provider and the telemetry endpoint', async () => {
    const response = await fetch(`${base}/`, { headers: { accept: 'text/html' } });
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self';");
    expect(csp).toContain("connect-src 'self' http://127.0.0.1:9 https://ingest.example.com;");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-(inline|eval)/);
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('strict-transport-security')).toBeNull();
    // COOP kept for its isolation; Origin-Agent-Cluster left to the browser's default (docs/decisions/0038).
    expect(response.headers.get('cross-origin-opener-policy')).toBe('same-origin');
    expect(response.headers.get('origin-agent-cluster')).toBeNull();
  });

  it('serves hashed assets as immutable, precompressed when the browser accepts brotli', async () => {
    const response = await fetch(`${base}/assets/app-abc123.js`, {
      headers: { 'accept-encoding': 'br, gzip' },
    });
    expect(response.status).toBe(200);
    expect(response.headers.get('cache-control')).toContain('immutable');
    expect(response.headers.get('content-encoding')).toBe('br');
    expect(await response.text()).toBe(ASSET);
    const plain = await fetch(`${base}/assets/app-abc123.js`, { headers: { 'accept-encoding': 'identity' } });
    expect(plain.headers.get('content-encoding')).toBeNull();
    expect(await plain.text()).toBe(ASSET);
  });

  it('answers unknown API paths with JSON 404, and /api/me without a token with 401', async () => {
    const missing = await fetch(`${base}/api/nothing`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toMatchObject({ error: 'not_found' });
    expect((await fetch(`${base}/api/me`)).status).toBe(401);
  });

  it('sends Permissions-Policy on pages and API answers, and no-store on every API answer', async () => {
    const page = await fetch(`${base}/`, { headers: { accept: 'text/html' } });
    expect(page.headers.get('permissions-policy')).toBe(PERMISSIONS_POLICY);
    expect(PERMISSIONS_POLICY).toContain('camera=()');
    const answers = [
      await fetch(`${base}/api/me`),
      await fetch(`${base}/api/me`, { headers: { authorization: 'Bearer a.b.c' } }),
      await fetch(`${base}/api/nothing`),
      await fetch(`${base}/api/openapi.json`),
      await fetch(`${base}/api/me`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{not json',
      }),
    ];
    expect(answers.map((response) => response.status)).toEqual([401, 503, 404, 200, 400]);
    // Every error in the one shape, with the contract's code for its cause.
    const errors = answers.filter((response) => response.status >= 400);
    const codes = await Promise.all(errors.map(async (r) => asErrorBody(await r.clone().json()).error));
    expect(codes).toEqual(['unauthorized', 'provider_unavailable', 'not_found', 'bad_request']);
    for (const response of answers) {
      expect(response.headers.get('cache-control')).toBe('no-store');
      expect(response.headers.get('permissions-policy')).toBe(PERMISSIONS_POLICY);
    }
  });

  it('never serves the raw build file: /index.html and its compressed copies lead to the page', async () => {
    for (const path of ['/index.html', '/index.html.br', '/index.html.gz']) {
      const response = await fetch(`${base}${path}`, {
        redirect: 'manual',
        headers: { accept: 'text/html' },
      });
      expect(response.status).toBe(301);
      expect(response.headers.get('location')).toBe('/');
    }
  });

  it('answers a missing asset or a source map with 404, never with the app page', async () => {
    for (const path of ['/assets/gone-123.js', '/assets/app-abc123.js.map', '/main.js.map']) {
      const response = await fetch(`${base}${path}`, { headers: { accept: 'text/html,*/*' } });
      expect(response.status).toBe(404);
      expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
      expect(await response.text()).not.toContain('gatehouse-config');
    }
  });

  it('answers 503 when the provider cannot be reached to check a token', async () => {
    const response = await fetch(`${base}/api/me`, { headers: { authorization: 'Bearer a.b.c' } });
    expect(response.status).toBe(503);
  });

  it('logs the whole API path and the reason of a 401, as one JSON line with a request id', async () => {
    const response = await fetch(`${base}/api/me`, { headers: { authorization: 'Basic abc' } });
    const reqId = response.headers.get('x-request-id');
    expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
    const line = logs.lines.find((entry) => entry.reqId === reqId);
    expect(line).toMatchObject({
      level: 'info',
      method: 'GET',
      path: '/api/me',
      status: 401,
      reason: 'The Authorization header is not a bearer or DPoP token',
    });
    expect(line?.msg).toMatch(
      /^GET \/api\/me 401 \d+ms \(The Authorization header is not a bearer or DPoP token\)$/,
    );
    expect(new Date(line?.time ?? '').toISOString()).toBe(line?.time);
  });

  it('never logs a query string (it can hold an authorization code) nor a token', async () => {
    const response = await fetch(`${base}/callback?code=SECRET-CODE&state=SECRET-STATE`, {
      headers: { accept: 'text/html', authorization: 'Bearer SECRET-TOKEN', dpop: 'SECRET-PROOF' },
    });
    const line = logs.lines.find((entry) => entry.reqId === response.headers.get('x-request-id'));
    expect(line?.msg).toMatch(/^GET \/callback 200 \d+ms$/);
    expect(line?.path).toBe('/callback');
    const api = await fetch(`${base}/api/me?code=SECRET-CODE`, {
      headers: { authorization: 'Bearer SECRET-TOKEN.x.y' },
    });
    expect(api.status).toBe(503);
    expect(logs.lines.some((entry) => entry.reqId === api.headers.get('x-request-id'))).toBe(true);
    expect(logs.text()).not.toContain('SECRET');
  });

  it("keeps a balancer's safe X-Request-Id and the traceparent's trace id; replaces an unsafe id", async () => {
    const trace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const kept = await fetch(`${base}/api/nothing`, {
      headers: { 'x-request-id': 'lb-7f3a.1', traceparent: `00-${trace}-00f067aa0ba902b7-01` },
    });
    expect(kept.headers.get('x-request-id')).toBe('lb-7f3a.1');
    expect(logs.lines.find((entry) => entry.reqId === 'lb-7f3a.1')).toMatchObject({
      traceId: trace,
      status: 404,
    });
    for (const unsafe of ['a b', 'x'.repeat(65), '{"level":"fatal"}']) {
      const replaced = await fetch(`${base}/api/nothing`, {
        headers: { 'x-request-id': unsafe, traceparent: `00-${'0'.repeat(32)}-00f067aa0ba902b7-01` },
      });
      const reqId = replaced.headers.get('x-request-id');
      expect(reqId).toMatch(/^[0-9a-f-]{36}$/);
      expect(logs.lines.find((entry) => entry.reqId === reqId)).not.toHaveProperty('traceId');
    }
    expect(logs.text()).not.toContain('fatal');
  });
});

describe('embedJson', () => {
  it('cannot be used to close the script element', () => {
    const text = embedJson({ evil: '</script><script>alert(1)</script>' });
    expect(text).not.toContain('</script>');
    expect(JSON.parse(text)).toEqual({ evil: '</script><script>alert(1)</script>' });
  });
});

describe('an app whose SPA is not built', () => {
  it('keeps running and answers its pages with a 500 that the log explains', async () => {
    const rejections: unknown[] = [];
    const onRejection = (reason: unknown) => rejections.push(reason);
    process.on('unhandledRejection', onRejection);
    const logs = captureLogs();
    const app = createApp({
      config: loadConfig({ OIDC_AUTHORITY: 'http://127.0.0.1:9', OIDC_CLIENT_ID: 'gatehouse' }),
      authority: 'http://127.0.0.1:9',
      webRoot: pathToFileURL(`${await mkdtemp(join(tmpdir(), 'gatehouse-unbuilt-'))}/`),
      logger: logs.logger,
      fetchImpl: () => Promise.reject(new TypeError('fetch failed')),
    });
    const unbuilt = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => unbuilt.once('listening', resolve));
      // A turn of the event loop after the read failed: an unhandled rejection would be reported by now.
      await new Promise((resolve) => setImmediate(resolve));
      const page = await fetch(`http://127.0.0.1:${(unbuilt.address() as AddressInfo).port}/`, {
        headers: { accept: 'text/html' },
      });
      expect(page.status).toBe(500);
      expect(logs.lines.find((line) => line.level === 'error')?.msg).toMatch(/ENOENT.*index\.html/);
      expect(rejections).toEqual([]);
    } finally {
      process.off('unhandledRejection', onRejection);
      await new Promise((resolve) => unbuilt.close(resolve));
    }
  });
});

describe('an app behind a proxy (TRUST_PROXY)', () => {
  it('sends HSTS only when its proxy says https, not when the client wrote it', async () => {
    const app = createApp({
      config: loadConfig({
        OIDC_AUTHORITY: 'http://127.0.0.1:9',
        OIDC_CLIENT_ID: 'gatehouse',
        TRUST_PROXY: '1',
      }),
      authority: 'http://127.0.0.1:9',
      webRoot: pathToFileURL(`${await mkdtemp(join(tmpdir(), 'gatehouse-proxied-'))}/`),
      fetchImpl: () => Promise.reject(new TypeError('fetch failed')),
    });
    const proxied = app.listen(0, '127.0.0.1');
    try {
      await new Promise((resolve) => proxied.once('listening', resolve));
      const hsts = async (proto: string) =>
        (
          await fetch(`http://127.0.0.1:${(proxied.address() as AddressInfo).port}/api/openapi.json`, {
            headers: { 'X-Forwarded-Proto': proto },
          })
        ).headers.get('strict-transport-security');
      expect(await hsts('https')).toContain('max-age=');
      // The client's own "https", followed by the proxy's "http": the request came over plain http.
      expect(await hsts('https, http')).toBeNull();
    } finally {
      await new Promise((resolve) => proxied.close(resolve));
    }
  });
});

describe('probes', () => {
  async function serve(options: { readiness: Readiness; authority: string }) {
    const app = createApp({
      config: loadConfig({ OIDC_AUTHORITY: options.authority, OIDC_CLIENT_ID: 'gatehouse' }),
      authority: options.authority,
      webRoot: pathToFileURL(`${await mkdtemp(join(tmpdir(), 'gatehouse-probes-'))}/`),
      readiness: options.readiness,
    });
    const probed = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => probed.once('listening', resolve));
    return {
      url: `http://127.0.0.1:${(probed.address() as AddressInfo).port}`,
      close: () => new Promise((resolve) => probed.close(resolve)),
    };
  }

  it('/healthz says ok; /readyz stays 200 (degraded) without the provider, and is 503 when its own store fails', async () => {
    let store = true;
    const readiness = new Readiness({ cacheMs: 0 }).add('store', () => store);
    // Nothing listens on port 9: the provider's discovery cannot be fetched. The provider is every
    // replica's: failing readiness for it would take every replica out of the balancer at once.
    const app = await serve({ readiness, authority: 'http://127.0.0.1:9' });
    try {
      const health = await fetch(`${app.url}/healthz`);
      expect([health.status, await health.text()]).toEqual([200, 'ok']);
      const ready = await fetch(`${app.url}/readyz`);
      expect(ready.status).toBe(200);
      expect(ready.headers.get('cache-control')).toBe('no-store');
      const text = await ready.text();
      expect(JSON.parse(text)).toEqual({ status: 'degraded', checks: { store: 'ok', provider: 'failing' } });
      expect(text).not.toMatch(/127\.0\.0\.1|ECONNREFUSED|fetch failed/);
      store = false;
      const failing = await fetch(`${app.url}/readyz`);
      expect([failing.status, await failing.json()]).toEqual([
        503,
        { status: 'failing', checks: { store: 'failing', provider: 'failing' } },
      ]);
    } finally {
      await app.close();
    }
  });

  it("/readyz is 200 once the provider's discovery is read, and 503 as soon as draining begins", async () => {
    const provider = await startLoopbackProvider();
    const readiness = new Readiness({ cacheMs: 60_000 }).add('store', () => true);
    const app = await serve({ readiness, authority: provider.issuer });
    try {
      const ready = await fetch(`${app.url}/readyz`);
      expect([ready.status, await ready.json()]).toEqual([
        200,
        { status: 'ok', checks: { store: 'ok', provider: 'ok' } },
      ]);
      readiness.drain();
      const draining = await fetch(`${app.url}/readyz`);
      expect([draining.status, ((await draining.json()) as { status: string }).status]).toEqual([
        503,
        'draining',
      ]);
    } finally {
      await app.close();
      await provider.close();
    }
  });
});

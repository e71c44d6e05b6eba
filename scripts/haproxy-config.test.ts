import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * deploy/haproxy.cfg, as operators copy it, run by Debian's HAProxy in front of three stand-in replicas:
 * what it sends again when a replica took a request and never answered, and the forwarded headers the
 * replicas read (the client's scheme for HSTS). `npm run test:unit` installs haproxy first
 * (scripts/ensure-test-tools.mjs).
 */
const CONFIG = fileURLToPath(new URL('../deploy/haproxy.cfg', import.meta.url));

interface Received {
  replica: string;
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
}

/**
 * Every request a stand-in replica received. The first replica to take a `/lost/…` path never answers
 * it (taken, maybe acted on, then the connection closed), as a replica that crashed mid-request: each
 * time it gets that path again, so a retry that HAProxy's round robin sends back to it fails again.
 */
const received: Received[] = [];
const droppedBy = new Map<string, string>();
const replicas: Server[] = [];
const balancers: ChildProcess[] = [];
let plain = '';
let tls = '';
let dir = '';

async function freePort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

function standIn(name: string): Promise<number> {
  const server = createServer((req, res) => {
    const path = req.url ?? '';
    if (path === '/readyz') return void res.end('{"status":"ok"}');
    received.push({ replica: name, method: req.method ?? '', path, headers: req.headers });
    req.resume();
    if (path.startsWith('/lost/') && (droppedBy.get(path) ?? name) === name) {
      droppedBy.set(path, name);
      req.socket.destroy();
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    res.end(JSON.stringify({ replica: name }));
  });
  replicas.push(server);
  return new Promise((resolve) =>
    server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)),
  );
}

/** Starts HAProxy with `config` and waits until every stand-in is up behind it. */
async function startBalancer(config: string, env: Record<string, string>, origin: string) {
  const child = spawn('/usr/sbin/haproxy', ['-db', '-f', config], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  balancers.push(child);
  await everyReplicaUp(origin, () =>
    child.exitCode === null ? undefined : stderr || `exit ${String(child.exitCode)}`,
  );
  received.length = 0;
}

/**
 * Waits until HAProxy at `origin` sends requests to all three stand-ins: three requests in a row answered
 * by three replicas (round robin over the servers it holds up). A replica whose health check was slow on
 * a busy machine is out for a while, and a retry then has fewer replicas to go to.
 */
async function everyReplicaUp(origin: string, failed: () => string | undefined = () => undefined) {
  for (let tries = 0; ; tries++) {
    const answeredBy = new Set<unknown>();
    for (let i = 0; i < 3; i++) {
      const answer = await send(origin, 'GET', '/up').catch(() => undefined);
      if (answer?.status === 200) answeredBy.add(answer.headers['x-gatehouse-replica']);
    }
    if (answeredBy.size === 3) return;
    const why = failed();
    if (why !== undefined || tries > 100)
      throw new Error(`haproxy did not come up: ${why ?? 'not every replica'}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function send(
  origin: string,
  method: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; headers: IncomingMessage['headers'] }> {
  const url = new URL(path, origin);
  const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const req = request(url, { method, headers, rejectUnauthorized: false, agent: false }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
    });
    req.on('error', reject);
    req.end(method === 'POST' ? '{"a":1}' : undefined);
  });
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'gatehouse-haproxy-'));
  const ports = await Promise.all(['gatehouse-1', 'gatehouse-2', 'gatehouse-3'].map(standIn));
  const env = Object.fromEntries(ports.map((port, i) => [`GATEHOUSE_REPLICA_${i + 1}`, `127.0.0.1:${port}`]));
  const plainPort = await freePort();
  plain = `http://127.0.0.1:${plainPort}`;
  await startBalancer(CONFIG, { ...env, GATEHOUSE_LB_BIND: `127.0.0.1:${plainPort}` }, plain);

  // The same file with TLS at the balancer: only the bind line differs.
  const pem = join(dir, 'lb.pem');
  execFileSync('openssl', [
    'req',
    '-x509',
    '-newkey',
    'rsa:2048',
    '-nodes',
    '-subj',
    '/CN=localhost',
    '-days',
    '1',
    '-keyout',
    pem,
    '-out',
    join(dir, 'cert.pem'),
  ]);
  await writeFile(pem, (await readFile(pem, 'utf8')) + (await readFile(join(dir, 'cert.pem'), 'utf8')));
  const tlsPort = await freePort();
  const text = await readFile(CONFIG, 'utf8');
  const bind = /^\s*bind "\$\{GATEHOUSE_LB_BIND\}"$/m;
  expect(text).toMatch(bind);
  const tlsConfig = join(dir, 'haproxy-tls.cfg');
  await writeFile(tlsConfig, text.replace(bind, `    bind 127.0.0.1:${tlsPort} ssl crt ${pem}`));
  tls = `https://127.0.0.1:${tlsPort}`;
  await startBalancer(tlsConfig, env, tls);
}, 60_000);

afterAll(async () => {
  for (const child of balancers) child.kill('SIGKILL');
  await Promise.all(replicas.map((server) => new Promise((resolve) => server.close(resolve))));
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('deploy/haproxy.cfg', () => {
  it('never sends a POST again once a replica took it, even if that replica never answered', async () => {
    const answer = await send(plain, 'POST', '/lost/post');
    expect(answer.status).toBe(502);
    expect(received.filter((r) => r.path === '/lost/post')).toHaveLength(1);
  });

  it('never sends a DPoP-bound request again (its proof would be refused as a replay)', async () => {
    const answer = await send(plain, 'GET', '/lost/dpop', { DPoP: 'eyJ0eXAiOiJkcG9wK2p3dCJ9.e30.sig' });
    expect(answer.status).toBe(502);
    expect(received.filter((r) => r.path === '/lost/dpop')).toHaveLength(1);
  });

  it('sends a plain GET that got no answer again, until another replica answers it', async () => {
    await everyReplicaUp(plain);
    const answer = await send(plain, 'GET', '/lost/get');
    expect(answer.status).toBe(200);
    const takers = received.filter((r) => r.path === '/lost/get').map((r) => r.replica);
    // Redispatched on every retry; HAProxy's round robin may still pick the same replica once at the end
    // of a round (then it fails again, and the next retry goes on), so not always on the first retry.
    const [first] = takers;
    const answeredBy = takers.at(-1);
    expect(takers.length).toBeGreaterThanOrEqual(2);
    expect(takers.slice(0, -1).every((replica) => replica === first)).toBe(true);
    expect(answeredBy).not.toBe(first);
    expect(answer.headers['x-gatehouse-replica']).toBe(answeredBy);
  });

  it("sets X-Forwarded-Proto to the client's scheme, whatever the client wrote", async () => {
    await send(plain, 'GET', '/proto-plain', { 'X-Forwarded-Proto': 'https' });
    await send(tls, 'GET', '/proto-tls', { 'X-Forwarded-Proto': 'http' });
    const proto = (path: string) => received.find((r) => r.path === path)?.headers['x-forwarded-proto'];
    expect(proto('/proto-plain')).toBe('http');
    expect(proto('/proto-tls')).toBe('https');
  });

  it("appends the client's address to X-Forwarded-For", async () => {
    await send(plain, 'GET', '/xff', { 'X-Forwarded-For': '203.0.113.9' });
    expect(received.find((r) => r.path === '/xff')?.headers['x-forwarded-for']).toBe(
      '203.0.113.9, 127.0.0.1',
    );
  });
});

import { LOCAL_INSTRUMENTATION_KEY } from '@gatehouse/config';
import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import http from 'node:http';
import net from 'node:net';
import { promisify } from 'node:util';
import { expect, test } from '@playwright/test';
import { startServer, type StartedServer } from './support';

/**
 * What a load balancer and an orchestrator see of one Gatehouse process: the probes, and a SIGTERM that
 * drains (readiness fails first, then the listener closes, the request in flight is answered, the
 * store is flushed, exit 0). A server of its own, since the test stops it.
 */
const run = promisify(execFile);

let server: StartedServer;

test.beforeAll(async () => {
  server = await startServer(40, { SHUTDOWN_DELAY_SECONDS: '1', SHUTDOWN_TIMEOUT_SECONDS: '30' });
});

test.afterAll(async () => {
  await server.stop();
});

function refusesConnections(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve(false);
    });
    socket.on('error', (error: NodeJS.ErrnoException) => resolve(error.code === 'ECONNREFUSED'));
  });
}

test('SIGTERM: readiness fails, new connections are refused, the request in flight is stored, exit 0', async ({
  request,
}) => {
  const health = await request.get(`${server.origin}/healthz`);
  expect([health.status(), await health.text()]).toEqual([200, 'ok']);
  await expect
    .poll(async () => (await request.get(`${server.origin}/readyz`)).json() as Promise<unknown>)
    .toEqual({ status: 'ok', checks: { store: 'ok', provider: 'ok' } });

  // A telemetry post whose body is half sent when the signal comes: a request in flight.
  const name = `drained-${randomUUID()}`;
  const body = JSON.stringify([
    {
      name: `Microsoft.ApplicationInsights.${LOCAL_INSTRUMENTATION_KEY.replaceAll('-', '')}.Event`,
      time: new Date().toISOString(),
      iKey: LOCAL_INSTRUMENTATION_KEY,
      tags: { 'ai.session.id': 'drain-session', 'ai.user.id': 'drain-user' },
      data: { baseType: 'EventData', baseData: { ver: 2, name, properties: {} } },
    },
  ]);
  const port = Number(new URL(server.origin).port);
  const post = http.request({
    host: '127.0.0.1',
    port,
    path: '/v2/track',
    method: 'POST',
    agent: false,
    headers: { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(body) },
  });
  const answer = new Promise<{ status: number; connection: string | undefined; json: unknown }>(
    (resolve, reject) => {
      post.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            connection: res.headers.connection,
            json: JSON.parse(text) as unknown,
          }),
        );
      });
      post.on('error', reject);
    },
  );
  post.write(body.slice(0, 40));
  await new Promise<void>((resolve) => post.once('socket', (socket) => socket.once('connect', resolve)));

  const exited = new Promise<number | null>((resolve) => server.process.once('exit', resolve));
  server.process.kill('SIGTERM');

  // Within SHUTDOWN_DELAY_SECONDS the listener still answers, with readiness failing.
  await expect
    .poll(async () => (await fetch(`${server.origin}/readyz`)).status, { intervals: [50] })
    .toBe(503);
  await expect.poll(() => refusesConnections(port), { intervals: [100] }).toBe(true);

  post.end(body.slice(40));
  const answered = await answer;
  expect(answered).toEqual({
    status: 200,
    connection: 'close',
    json: { itemsReceived: 1, itemsAccepted: 1, errors: [] },
  });
  expect(await exited).toBe(0);

  // The collector was flushed and closed: the item is in the store the next process reads.
  const { stdout } = await run(process.execPath, ['packages/collector/dist/cli/export.js'], {
    env: { ...process.env, GATEHOUSE_DATA_DIR: server.dataDir },
    maxBuffer: 64 * 1024 * 1024,
  });
  expect(stdout).toContain(name);
});

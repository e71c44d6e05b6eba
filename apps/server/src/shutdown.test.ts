import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { defaultHttpLimits } from '@gatehouse/collector';
import { listen, type GatehouseServer } from './listen.js';
import { trackRequests } from './shutdown.js';

interface Answer {
  status: number;
  connection: string | undefined;
  body: string;
}

let server: GatehouseServer | undefined;
afterEach(() => {
  server?.closeAllConnections();
  server?.close();
  server = undefined;
});

/** A server whose /slow answers when the test says so, over the app's own `listen`. */
async function start() {
  let release: () => void = () => undefined;
  const released = new Promise<void>((resolve) => (release = resolve));
  let markStarted: () => void = () => undefined;
  const slowStarted = new Promise<void>((resolve) => (markStarted = resolve));
  server = await listen(
    (req, res) => {
      if (req.url === '/slow') {
        markStarted();
        void released.then(() => res.end('slow done'));
      } else res.end('fast');
    },
    0,
    undefined,
    defaultHttpLimits,
    '127.0.0.1',
  );
  const drainer = trackRequests(server);
  const { port } = server.address() as AddressInfo;
  return { drainer, port, release, slowStarted };
}

function get(port: number, path: string, agent: http.Agent): Promise<Answer> {
  return new Promise((resolve, reject) => {
    http
      .get({ host: '127.0.0.1', port, path, agent }, (res) => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, connection: res.headers.connection, body }),
        );
      })
      .on('error', reject);
  });
}

function connect(port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1', () => {
      socket.destroy();
      resolve();
    });
    socket.on('error', reject);
  });
}

describe('draining on shutdown', () => {
  it('finishes the request in flight, refuses new connections, and closes kept-alive ones', async () => {
    const { drainer, port, release, slowStarted } = await start();
    const agent = new http.Agent({ keepAlive: true });
    // An idle kept-alive connection, as a load balancer holds them.
    expect((await get(port, '/fast', agent)).connection).toBe('keep-alive');
    const idle = Object.values(agent.freeSockets).flat()[0];
    expect(idle).toBeDefined();
    const idleClosed = new Promise((resolve) => idle?.once('close', resolve));

    const busyAgent = new http.Agent({ keepAlive: true });
    const slow = get(port, '/slow', busyAgent);
    await slowStarted;
    expect(drainer.inFlight).toBe(1);
    const drained = drainer.drain(10_000);

    await idleClosed;
    await expect(connect(port)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
    release();
    expect(await slow).toEqual({ status: 200, connection: 'close', body: 'slow done' });
    expect(await drained).toEqual({ cut: 0 });
    agent.destroy();
    busyAgent.destroy();
  });

  it('cuts what is still in flight when the time is up', async () => {
    const { drainer, port, slowStarted } = await start();
    const agent = new http.Agent({ keepAlive: false });
    const slow = get(port, '/slow', agent);
    await slowStarted;
    expect(await drainer.drain(50)).toEqual({ cut: 1 });
    await expect(slow).rejects.toThrow(/socket hang up/);
  });
});

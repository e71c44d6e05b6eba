import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { connect, type AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { lingerOnClose } from './lingering-close.js';

let server: Server | undefined;
afterEach(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => server?.close(resolve));
  server = undefined;
});

/** A server that answers 503 `Connection: close` to every request as soon as its headers are read. */
async function refusing(linger: boolean, lingerMs?: number): Promise<number> {
  server = createServer((_req, res) => {
    res.writeHead(503, { 'Retry-After': '10', 'Content-Length': 0, Connection: 'close' });
    if (linger) lingerOnClose(res, lingerMs);
    res.end();
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  return (server.address() as AddressInfo).port;
}

const BODY = 4 * 1024 * 1024;

/** The server's open connections. */
const connections = () =>
  new Promise<number>((resolve, reject) =>
    server?.getConnections((error, count) => (error ? reject(error) : resolve(count))),
  );

/**
 * Sends headers and 1,000 bytes of a 4 MiB body, waits for the answer, then sends the rest of the body
 * (as a client that writes its whole body before it looks at the answer does) and, unless told to hold
 * the connection, ends its side. Resolves with the answer's status line, the error of the second write
 * (if any), and the time from the second write to the server's close of the connection.
 */
async function sendAfterAnswer(port: number, hold = false) {
  const socket = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
  let received = '';
  socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
  // A reset is an outcome here, read from the write's callback.
  socket.on('error', () => undefined);
  socket.write(`POST / HTTP/1.1\r\nHost: x\r\nContent-Length: ${BODY}\r\n\r\n`);
  socket.write(Buffer.alloc(1000));
  await expect.poll(() => received).toMatch(/^HTTP\/1\.1 503 /);
  // The server has answered and sent its FIN: give it the moment Node's own close takes.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = Date.now();
  const writeError = await new Promise<string | undefined>((resolve) =>
    socket.write(Buffer.alloc(BODY - 1000), (error) =>
      resolve((error as NodeJS.ErrnoException | null | undefined)?.code),
    ),
  );
  if (!hold) socket.end();
  await expect.poll(connections, { timeout: 10_000 }).toBe(0);
  socket.destroy();
  return { status: received.split('\r\n')[0], writeError, closedAfterMs: Date.now() - started };
}

describe('lingerOnClose', () => {
  it('without it, Node resets the connection of an answer sent before the body: the rest of the body fails', async () => {
    // What the collector's early 429/503/413 did before (the failure lingering close is for).
    const { status, writeError } = await sendAfterAnswer(await refusing(false));
    expect(status).toBe('HTTP/1.1 503 Service Unavailable');
    expect(writeError).toMatch(/^(EPIPE|ECONNRESET)$/);
  });

  it('reads and discards the rest of the body, then closes when the client ends its side', async () => {
    const { status, writeError, closedAfterMs } = await sendAfterAnswer(await refusing(true));
    expect(status).toBe('HTTP/1.1 503 Service Unavailable');
    expect(writeError).toBeUndefined();
    // Closed by the client's end, long before the linger's 5 s.
    expect(closedAfterMs).toBeLessThan(2000);
  });

  it('closes a connection whose client never ends once the linger is over', async () => {
    const { writeError, closedAfterMs } = await sendAfterAnswer(await refusing(true, 300), true);
    expect(writeError).toBeUndefined();
    expect(closedAfterMs).toBeLessThan(3000);
  });
});

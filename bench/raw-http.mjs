import net from 'node:net';

/**
 * A lean HTTP/1.1 load generator, as wrk would be: requests are prepared once (head and body in one
 * Buffer), and each connection sends one at a time over keep-alive and reads the answer. On a 2-core
 * machine the senders share the cores with the server they measure, so they should cost little.
 */
export function prepareRequest(url, body, headers = { 'Content-Type': 'application/json' }) {
  const { pathname, host } = new URL(url);
  const lines = Object.entries(headers).map(([name, value]) => `${name}: ${value}\r\n`);
  const head = `POST ${pathname} HTTP/1.1\r\nHost: ${host}\r\n${lines.join('')}Content-Length: ${body.length}\r\n\r\n`;
  return Buffer.concat([Buffer.from(head, 'latin1'), body]);
}

/**
 * Opens a keep-alive connection; `send(request)` resolves with the answer's status and text, or with
 * status 0 when the connection closes before the whole answer came (the server may answer early and
 * close, as the collector does past its bytes in flight); the connection is then done with.
 */
export async function connect(url) {
  const { hostname, port } = new URL(url);
  const socket = net.connect({ host: hostname, port: Number(port), noDelay: true });
  await new Promise((resolve, reject) => socket.once('connect', resolve).once('error', reject));
  let waiting;
  let chunks = [];
  let received = 0;
  let total = -1;
  let status = 0;
  let bodyStart = 0;
  socket.on('data', (chunk) => {
    chunks.push(chunk);
    received += chunk.length;
    if (total < 0) {
      const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
      chunks = [data];
      const end = data.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = data.toString('latin1', 0, end);
      status = Number(head.slice(9, 12));
      const length = /\r\ncontent-length: *(\d+)/i.exec(head);
      if (!length) throw new Error(`answer without Content-Length: ${head}`);
      bodyStart = end + 4;
      total = bodyStart + Number(length[1]);
    }
    if (received < total) return;
    const data = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks);
    const answer = { status, text: data.toString('utf8', bodyStart, total) };
    chunks = [];
    received = 0;
    total = -1;
    const resolve = waiting;
    waiting = undefined;
    resolve?.(answer);
  });
  let closed = false;
  socket.on('error', () => undefined);
  socket.on('close', () => {
    closed = true;
    const resolve = waiting;
    waiting = undefined;
    resolve?.({ status: 0, text: '' });
  });
  return {
    get closed() {
      return closed;
    },
    send(request) {
      if (closed) return Promise.resolve({ status: 0, text: '' });
      return new Promise((resolve) => {
        waiting = resolve;
        socket.write(request);
      });
    },
    close: () => socket.destroy(),
  };
}

import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

/**
 * How long a connection answered before its body was read keeps reading (and discarding) what its client
 * still sends, at most: nginx's `lingering_timeout` (5 s). A client that sends longer than that has read
 * its answer long before.
 */
export const LINGER_MS = 5_000;

/**
 * Closes the connection of a `Connection: close` answer in stages, as RFC 9112 section 9.6 asks of a
 * server that answers before reading the whole request (nginx's `lingering_close`): the answer and a FIN
 * are sent, then what the client still sends is read and discarded (Node's server dumps an unread
 * request's body) until the client closes its side or `lingerMs` pass.
 *
 * Node's server closes such a connection at once instead (`socket.destroySoon()`: FIN, then close). With
 * request bytes unread the kernel then resets the connection, and the client's next write of its body
 * fails (EPIPE) and tears down its socket: a client that reads its answer after sending (Node's `http`, or
 * one slowed by a busy machine) never sees the 429, 503 or 413 and its Retry-After, only a network
 * error. Call before `res.end()`.
 */
export function lingerOnClose(res: ServerResponse, lingerMs = LINGER_MS): void {
  const socket = res.socket;
  if (!socket) return;
  // The one step of Node's close this replaces, on this socket alone.
  socket.destroySoon = function lingeringClose(this: Socket) {
    this.end();
    // The socket closes when the client ends its side (Node's server then destroys it) or here.
    const timer = setTimeout(() => this.destroy(), lingerMs);
    timer.unref();
    this.once('close', () => clearTimeout(timer));
  };
}

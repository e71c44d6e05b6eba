import type { IncomingMessage } from 'node:http';

const LIMIT_BYTES = 16 * 1024;

/**
 * Reads a small request body as text. Our own routes need only tiny form and JSON bodies, so a hand-rolled
 * reader is enough and avoids a body-parser middleware that would also swallow bodies meant for oidc-provider.
 */
export async function readText(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    const buffer = Buffer.isBuffer(chunk) ? chunk : Buffer.from(String(chunk));
    size += buffer.length;
    if (size > LIMIT_BYTES) throw new Error('request body too large');
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export async function readForm(req: IncomingMessage): Promise<URLSearchParams> {
  return new URLSearchParams(await readText(req));
}

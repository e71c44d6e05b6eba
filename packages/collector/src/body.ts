import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';

const gunzipAsync = promisify(gunzip);

/** Why a body could not be turned into items: the status to answer and what to say. */
export class BodyError extends Error {
  constructor(
    readonly statusCode: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

/** Reads the raw request body, refusing it past `maxBytes` (checked against Content-Length first). */
export async function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) throw new BodyError(413, `Body is larger than ${maxBytes} bytes.`);
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of req as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) throw new BodyError(413, `Body is larger than ${maxBytes} bytes.`);
      chunks.push(chunk);
    }
  } catch (error) {
    if (error instanceof BodyError) throw error;
    // The client went away mid-body: nothing to store, and nobody left to read the answer.
    throw new BodyError(400, 'Body was not received completely.');
  }
  return Buffer.concat(chunks, size);
}

/**
 * Undoes `Content-Encoding: gzip` (what the Node.js SDK always sends) with a cap on the inflated
 * size, so a small compressed body cannot expand into gigabytes. gunzip runs on libuv's pool.
 */
export async function decode(body: Buffer, encoding: string | undefined, maxBytes: number): Promise<string> {
  const coding = (encoding ?? 'identity').trim().toLowerCase();
  if (coding === 'identity' || coding === '') return body.toString('utf8');
  if (coding !== 'gzip') throw new BodyError(415, `Content-Encoding '${coding}' is not supported.`);
  try {
    return (await gunzipAsync(body, { maxOutputLength: maxBytes })).toString('utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new BodyError(413, `Decompressed body is larger than ${maxBytes} bytes.`);
    }
    throw new BodyError(400, 'Body is not valid gzip.');
  }
}

/** One item of a batch: the parsed JSON value, or why its text was not JSON. */
export type ParsedItem = { ok: true; value: unknown } | { ok: false; message: string };

function parseLines(text: string): ParsedItem[] {
  const items: ParsedItem[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      items.push({ ok: true, value: JSON.parse(line) as unknown });
    } catch {
      items.push({ ok: false, message: 'Item is not valid JSON.' });
    }
  }
  return items;
}

/**
 * Splits a body into items. The SDKs send a JSON array of envelopes (browser, as application/json or
 * as text/plain from sendBeacon), one envelope per line (Node.js SDK, application/x-json-stream, and the
 * browser's emitLineDelimitedJson), or a single envelope. The Content-Type is only a hint: a body that
 * is one JSON value is read as such, otherwise as lines. Throws when nothing at all could be parsed.
 */
export function splitItems(text: string, contentType: string | undefined): ParsedItem[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw new BodyError(400, 'Body is empty.');
  let items: ParsedItem[] | undefined;
  if (!(contentType ?? '').toLowerCase().includes('x-json-stream')) {
    try {
      const value = JSON.parse(body) as unknown;
      items = Array.isArray(value)
        ? value.map((v: unknown) => ({ ok: true, value: v }))
        : [{ ok: true, value }];
    } catch {
      // Not one JSON value: fall through to newline-delimited JSON.
    }
  }
  items ??= parseLines(body);
  if (items.length === 0) throw new BodyError(400, 'Body holds no items.');
  if (!items.some((i) => i.ok)) throw new BodyError(400, 'Body is not valid JSON.');
  return items;
}

import type { IncomingMessage } from 'node:http';
import { promisify } from 'node:util';
import { gunzip } from 'node:zlib';
import type { EnvelopeSource } from './contracts.js';

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

/**
 * One item of a batch: the parsed JSON value with the text it was parsed from (and, for items of an
 * array, how deeply that text nests), or why its text was not JSON.
 */
export type ParsedItem =
  { ok: true; value: unknown; source?: EnvelopeSource } | { ok: false; message: string };

function parseLines(text: string): ParsedItem[] {
  const items: ParsedItem[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      items.push({ ok: true, value: JSON.parse(line) as unknown, source: { text: line } });
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
    items = parseArray(body);
    if (!items) {
      try {
        const value = JSON.parse(body) as unknown;
        items = Array.isArray(value)
          ? value.map((v: unknown) => ({ ok: true, value: v }))
          : [{ ok: true, value, source: { text: body } }];
      } catch {
        // Not one JSON value: fall through to newline-delimited JSON.
      }
    }
  }
  items ??= parseLines(body);
  if (items.length === 0) throw new BodyError(400, 'Body holds no items.');
  if (!items.some((i) => i.ok)) throw new BodyError(400, 'Body is not valid JSON.');
  return items;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const isJsonSpace = (c: number) => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
const blank = /^[ \n\r\t]*$/;

/**
 * A JSON array body split into its elements, each parsed from its own text (what the browser SDK
 * sends), so the collector can keep each envelope's text as received instead of re-serialising it.
 * Finds the top-level commas by tracking strings and brackets; JSON.parse of each element then checks
 * everything else, so the elements are exactly those of JSON.parse(text). Undefined when `text` is not
 * such an array (or anything looks off): the caller then parses it as before.
 */
function parseArray(text: string): ParsedItem[] | undefined {
  let i = 0;
  while (i < text.length && isJsonSpace(text.charCodeAt(i))) i++;
  if (text.charCodeAt(i) !== OPEN_ARRAY) return undefined;
  const items: ParsedItem[] = [];
  let start = i + 1;
  let depth = 1;
  let deepest = 1;
  for (i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      // Skip the string: its end is the next quote not escaped by an odd run of backslashes.
      for (;;) {
        i = text.indexOf('"', i + 1);
        if (i < 0) return undefined;
        let backslashes = 0;
        while (text.charCodeAt(i - 1 - backslashes) === BACKSLASH) backslashes++;
        if (backslashes % 2 === 0) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT || (c === COMMA && depth === 1)) {
      if (c !== COMMA && --depth > 0) continue;
      if (depth === 0 && c !== CLOSE_ARRAY) return undefined;
      const element = text.slice(start, i);
      // `[]` has no element; any other empty element (`[1,]`) fails JSON.parse.
      if (c === COMMA || items.length > 0 || !blank.test(element)) {
        try {
          const value = JSON.parse(element) as unknown;
          items.push({ ok: true, value, source: { text: element, depth: deepest - 1 } });
        } catch {
          return undefined;
        }
      }
      if (depth === 0) break;
      start = i + 1;
      deepest = 1;
    }
  }
  if (depth !== 0) return undefined;
  for (i++; i < text.length; i++) if (!isJsonSpace(text.charCodeAt(i))) return undefined;
  return items;
}

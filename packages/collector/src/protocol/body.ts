import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';
import type { EnvelopeSource } from './envelopes.js';

/** Inflated bytes made at a time: each is charged as it comes (the stream's default is 16 KiB). */
const INFLATE_CHUNK_BYTES = 64 * 1024;

/** Why a body could not be turned into items: the status to answer and what to say. */
export class BodyError extends Error {
  constructor(
    readonly statusCode: 400 | 413 | 415,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Why reading or inflating a body was stopped before its end: it would take more memory than the
 * request may hold now (`over-budget`), or it arrives slower than the least rate (`too-slow`).
 */
export class BodyStopped extends Error {
  constructor(
    readonly code: 'over-budget' | 'too-slow',
    message: string,
  ) {
    super(message);
  }
}

/** The request may not hold more bytes now. */
export const overBudget = () =>
  new BodyStopped('over-budget', 'Too many request bodies in flight; retry later.');

/** Counts `bytes` more held for a request; false when that would take more than it may. */
export type Charge = (bytes: number) => boolean;

export interface ReadBodyOptions {
  /** Told each chunk's size as it arrives, before it is kept. */
  charge?: Charge;
  /**
   * The least rate a body arrives at, in bytes per second, once `graceMs` have passed (Apache's
   * mod_reqtimeout `MinRate`: every `minBytesPerSecond` received buys another second). 0: none.
   */
  minBytesPerSecond?: number;
  graceMs?: number;
}

const tooLarge = (maxBytes: number) => new BodyError(413, `Body is larger than ${maxBytes} bytes.`);

/**
 * Reads the raw request body, refusing it past `maxBytes` (checked against Content-Length first). On
 * a refusal the rest is left unread, for the answer to ask the client to close.
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  { charge, minBytesPerSecond = 0, graceMs = 0 }: ReadBodyOptions = {},
): Promise<Buffer> {
  const declared = Number(req.headers['content-length']);
  if (declared > maxBytes) return Promise.reject(tooLarge(maxBytes));
  // The client went away mid-body: nothing to store, and nobody left to read the answer.
  const incomplete = () => new BodyError(400, 'Body was not received completely.');
  if (req.destroyed) return Promise.reject(incomplete());
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const started = Date.now();
    let timer: NodeJS.Timeout | undefined;
    const finish = (error?: Error) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('error', onError).off('close', onClose);
      if (!error) return resolve(Buffer.concat(chunks, size));
      req.pause();
      reject(error);
    };
    const onData = (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) finish(tooLarge(maxBytes));
      else if (charge && !charge(chunk.length)) finish(overBudget());
      else chunks.push(chunk);
    };
    const onEnd = () => finish();
    const onError = () => finish(incomplete());
    const onClose = () => req.complete || finish(incomplete());
    const checkRate = () => {
      const wait = started + graceMs + (size / minBytesPerSecond) * 1000 - Date.now();
      if (wait <= 0) {
        finish(new BodyStopped('too-slow', `Body arrived slower than ${minBytesPerSecond} bytes a second.`));
        return;
      }
      timer = setTimeout(checkRate, wait);
      timer.unref();
    };
    if (minBytesPerSecond > 0) checkRate();
    req.on('data', onData).on('end', onEnd).on('error', onError).on('close', onClose);
  });
}

/**
 * Undoes `Content-Encoding: gzip` (what the Node.js SDK always sends) with a cap on the inflated
 * size, so a small compressed body cannot expand into gigabytes; `charge` is told each inflated chunk
 * as it is made. Inflates on libuv's pool; an identity body is returned as it is.
 */
export function inflate(
  body: Buffer,
  encoding: string | undefined,
  maxBytes: number,
  charge?: Charge,
): Promise<Buffer> {
  const coding = (encoding ?? 'identity').trim().toLowerCase();
  if (coding === 'identity' || coding === '') return Promise.resolve(body);
  if (coding !== 'gzip')
    return Promise.reject(new BodyError(415, `Content-Encoding '${coding}' is not supported.`));
  return new Promise((resolve, reject) => {
    const gunzip = createGunzip({ chunkSize: INFLATE_CHUNK_BYTES });
    const chunks: Buffer[] = [];
    let size = 0;
    const stop = (error: Error) => {
      gunzip.destroy();
      reject(error);
    };
    gunzip.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) stop(new BodyError(413, `Decompressed body is larger than ${maxBytes} bytes.`));
      else if (charge && !charge(chunk.length)) stop(overBudget());
      else chunks.push(chunk);
    });
    gunzip.on('end', () => resolve(Buffer.concat(chunks, size)));
    gunzip.on('error', () => reject(new BodyError(400, 'Body is not valid gzip.')));
    gunzip.end(body);
  });
}

/**
 * One item of a batch: the parsed JSON value with the text it was parsed from (and, for items of an
 * array, a bound on how deeply that text nests), or why its text was not JSON.
 */
export type ParsedItem =
  { ok: true; value: unknown; source?: EnvelopeSource } | { ok: false; message: string };

/** The 413 for a body holding more than `maxItems` items, thrown as soon as one too many is found. */
export function tooManyItems(maxItems: number): BodyError {
  return new BodyError(413, `Body holds more than ${maxItems} items.`);
}

function parseLines(text: string, maxItems: number): ParsedItem[] {
  const items: ParsedItem[] = [];
  // indexOf rather than split('\n'): a body of millions of short lines stops at maxItems + 1.
  for (let start = 0; start < text.length;) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    const line = text.slice(start, end);
    start = end + 1;
    if (line.trim() === '') continue;
    if (items.length === maxItems) throw tooManyItems(maxItems);
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
export function splitItems(
  text: string,
  contentType: string | undefined,
  maxItems = Number.POSITIVE_INFINITY,
): ParsedItem[] {
  return split(text, contentType, true, maxItems);
}

/** splitItems without guessing where array elements end: the reference the guesses are tested against. */
export function splitItemsExactly(text: string, contentType: string | undefined): ParsedItem[] {
  return split(text, contentType, false, Number.POSITIVE_INFINITY);
}

/** Throws a 413 (tooManyItems) as soon as the body turns out to hold more than `maxItems` items. */
function split(
  text: string,
  contentType: string | undefined,
  guess: boolean,
  maxItems: number,
): ParsedItem[] {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (body.trim() === '') throw new BodyError(400, 'Body is empty.');
  let items: ParsedItem[] | undefined;
  if (!(contentType ?? '').toLowerCase().includes('x-json-stream')) {
    items = parseArray(body, guess, maxItems);
    if (!items) {
      let value: unknown;
      try {
        value = JSON.parse(body) as unknown;
      } catch {
        // Not one JSON value: fall through to newline-delimited JSON.
      }
      if (Array.isArray(value) && value.length > maxItems) throw tooManyItems(maxItems);
      if (value !== undefined)
        items = Array.isArray(value)
          ? value.map((v: unknown) => ({ ok: true, value: v }))
          : [{ ok: true, value, source: { text: body } }];
    }
  }
  items ??= parseLines(body, maxItems);
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
 * Undefined when `text` is not such an array (or anything looks off): the caller then parses it as
 * before. Each element's end is guessed (see Guesser) or, failing that, found by scanElement; either
 * way the elements are exactly those of JSON.parse(text).
 */
function parseArray(text: string, guess: boolean, maxItems: number): ParsedItem[] | undefined {
  let start = 0;
  while (start < text.length && isJsonSpace(text.charCodeAt(start))) start++;
  if (text.charCodeAt(start) !== OPEN_ARRAY) return undefined;
  start++;
  const guesser = guess ? Guesser.of(text, start) : undefined;
  const items: ParsedItem[] = [];
  for (;;) {
    let end: number;
    const guessed = guesser?.element(start);
    if (guessed) {
      items.push(guessed.item);
      end = guessed.end;
    } else {
      const found = scanElement(text, start);
      if (!found) return undefined;
      end = found.end;
      const element = text.slice(start, end);
      // `[]` has no element; any other empty element (`[1,]`) fails JSON.parse.
      if (text.charCodeAt(end) === COMMA || items.length > 0 || !blank.test(element)) {
        try {
          const value = JSON.parse(element) as unknown;
          items.push({ ok: true, value, source: { text: element, depth: found.depth } });
        } catch {
          return undefined;
        }
      }
    }
    start = end + 1;
    // Counting here, not after the split, keeps a body of millions of tiny elements from being parsed.
    if (items.length > maxItems) throw tooManyItems(maxItems);
    if (text.charCodeAt(end) === CLOSE_ARRAY) break;
  }
  for (let i = start; i < text.length; i++) if (!isJsonSpace(text.charCodeAt(i))) return undefined;
  return items;
}

/**
 * The exact end of the array element starting at `start`: the index of the top-level comma or of the
 * `]` closing the array, found by tracking strings and brackets, and how deeply the element nests.
 * JSON.parse of the element then checks everything else. Undefined if the brackets do not add up.
 */
function scanElement(text: string, start: number): { end: number; depth: number } | undefined {
  let depth = 1;
  let deepest = 1;
  for (let i = start; i < text.length; i++) {
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
      return { end: i, depth: deepest - 1 };
    }
  }
  return undefined;
}

/** `indexOf(char, from)` that keeps its last answer, so neighbouring elements do not search a stretch twice. */
function finder(text: string, char: string): (from: number) => number {
  let searched = 0;
  let at = -1;
  return (from) => {
    if (from < searched || from > at) {
      searched = from;
      at = text.indexOf(char, from);
      if (at < 0) at = text.length;
    }
    return at;
  };
}

/** How often the character `next` finds occurs in text[start, end). */
function occurrences(next: (from: number) => number, start: number, end: number): number {
  let n = 0;
  for (let i = next(start); i < end; i = next(i + 1)) n++;
  return n;
}

/** Failed guesses (each a thrown SyntaxError, some 10 µs) allowed per body before guessing stops. */
const MAX_FAILED_GUESSES = 4;
/** How many `},{` of arrays nested in one element a guess looks past before giving up on the element. */
const MAX_CUTS = 32;

/**
 * Guesses where array elements end, which costs much less than scanElement's walk over every character.
 * The browser SDK writes `[{...},{...}]`, so an element that starts at `start` likely ends before the
 * next `},{`, or else before the closing `]`. A guess is taken only if JSON.parse accepts the text from
 * `start` to it, and that is enough: scanElement walks a text that is one JSON value to its end without
 * stopping (its commas are all inside its brackets) and ends outside any string, at depth 1, so the `,`
 * of `},{` or the closing `]` that follows is where it ends the element too.
 *
 * A failing JSON.parse costs more than parsing the element (it throws), so guesses that cannot parse
 * are avoided: a `},{` in an array nested in the element (an exception's parsedStack) leaves a `[`
 * open, so the guess moves on to the next `},{` until the text up to it holds as many `[` as `]`.
 * Brackets and `},{` in strings can mislead this, so guessing gives up on an element (scanElement finds
 * its end) after MAX_CUTS, and stops for the rest of the body after a few failed parses, once the
 * guesses given up span the body's length, or when the rest of the body fails as one element (an array
 * not written as `},{`, such as `}, {`).
 */
class Guesser {
  private failures = 0;
  private wasted = 0;
  private readonly openArrays: (from: number) => number;
  private readonly closeArrays: (from: number) => number;
  private readonly openObjects: (from: number) => number;

  private constructor(
    private readonly text: string,
    /** Index of the `]` closing the array: the last character that is not whitespace. */
    private readonly close: number,
  ) {
    this.openArrays = finder(text, '[');
    this.closeArrays = finder(text, ']');
    this.openObjects = finder(text, '{');
  }

  /** Undefined when the text cannot be an array whose elements start at `start`. */
  static of(text: string, start: number): Guesser | undefined {
    let close = text.length - 1;
    while (close >= start && isJsonSpace(text.charCodeAt(close))) close--;
    return close >= start && text.charCodeAt(close) === CLOSE_ARRAY ? new Guesser(text, close) : undefined;
  }

  /** The element starting at `start` and the index of the `,` or `]` after it, if guessed. */
  element(start: number): { item: ParsedItem; end: number } | undefined {
    if (this.failures >= MAX_FAILED_GUESSES || this.wasted > this.text.length) return undefined;
    let end = start;
    let cut = start;
    let opens = 0;
    let closes = 0;
    for (let cuts = 0; ; cuts++) {
      cut = this.text.indexOf('},{', cut);
      const next = cut < 0 ? this.close : cut + 1;
      opens += occurrences(this.openArrays, end, next);
      closes += occurrences(this.closeArrays, end, next);
      end = next;
      if (opens === closes) break;
      if (cut < 0 || cuts === MAX_CUTS) {
        this.wasted += end - start;
        return undefined;
      }
      cut += 3;
    }
    const text = this.text.slice(start, end);
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      this.failures = cut < 0 ? MAX_FAILED_GUESSES : this.failures + 1;
      this.wasted += end - start;
      return undefined;
    }
    // Every level of nesting opens a bracket of its own, so their count bounds the depth.
    const depth = opens + occurrences(this.openObjects, start, end);
    return { item: { ok: true, value, source: { text, depth } }, end };
  }
}

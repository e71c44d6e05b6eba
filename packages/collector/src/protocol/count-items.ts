/**
 * How many items a decoded body holds, without parsing or validating them: what a 503 or 429 sent
 * before validation must name, because the Node.js SDK 2.x resends only the items an answer names
 * by index (Library/Sender.ts, "Only retry errors if 429, 500 or 503 response codes").
 *
 * It reads the body the way body.ts's splitItems does (a JSON array, one JSON value, or one envelope
 * per line) and counts what splitItems would return for a well-formed body: array elements at the
 * top level, or non-blank lines. For malformed text the count is a best effort, and at least 1.
 */
export function countItems(text: string, contentType: string | undefined): number {
  const body = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (!(contentType ?? '').toLowerCase().includes('x-json-stream')) {
    const elements = countArrayElements(body);
    if (elements !== undefined) return Math.max(1, elements);
  }
  return Math.max(1, countLines(body));
}

function countLines(text: string): number {
  let count = 0;
  let start = 0;
  while (start <= text.length) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (/\S/.test(text.slice(start, end))) count++;
    start = end + 1;
  }
  return count;
}

/**
 * Top-level elements of a JSON array text (commas outside strings at depth 1, plus one), or undefined
 * when the text is not one array, in which case it is one value or lines (a single envelope counts
 * as one line).
 */
function countArrayElements(text: string): number | undefined {
  const first = text.search(/\S/);
  if (first < 0 || text.charCodeAt(first) !== 0x5b /* [ */) return undefined;
  let depth = 0;
  let commas = 0;
  let empty = true;
  for (let i = first; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22 /* " */) {
      // Skip the string: to the next quote not escaped by a backslash.
      for (i++; i < text.length; i++) {
        const s = text.charCodeAt(i);
        if (s === 0x5c /* \ */) i++;
        else if (s === 0x22) break;
      }
      if (depth === 1) empty = false;
    } else if (c === 0x5b || c === 0x7b /* [ { */) {
      if (depth === 1) empty = false;
      depth++;
    } else if (c === 0x5d || c === 0x7d /* ] } */) {
      depth--;
      if (depth === 0) {
        // One array followed by more than whitespace is not one JSON value: read as lines.
        return /\S/.test(text.slice(i + 1)) ? undefined : empty ? 0 : commas + 1;
      }
    } else if (c === 0x2c /* , */ && depth === 1) commas++;
    else if (depth === 1 && c > 0x20) empty = false;
  }
  return undefined;
}

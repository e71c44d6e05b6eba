/**
 * Removes what must never leave the browser in telemetry: authorization codes, `state`,
 * `session_state`, tokens, and anything that looks like a JWT, from every string an envelope carries
 * (URLs, names, messages, properties), wherever they sit.
 *
 * These strings come from the address bar and from pages, so an attacker chooses them: every pattern
 * here runs in time linear in the input (no pattern can backtrack over what it already read), and
 * strings are cut to the SDK's largest field limit before anything runs on them.
 */
const SECRET_PARAMS = [
  'code',
  'state',
  'session_state',
  'id_token',
  'access_token',
  'refresh_token',
  'token',
  'code_verifier',
  'id_token_hint',
  'client_secret',
];
// Linear: a literal start, then one character class with nothing after it to backtrack into.
const PARAM = new RegExp(`([?&#](?:${SECRET_PARAMS.join('|')})=)[^&#\\s"']*`, 'gi');
// Linear: `=` is outside the class before it, and `\s+` gives back only spaces, each failing at once.
const BEARER = /\b(Bearer)\s+[\w\-.~+/]+=*/gi;
// Maximal runs of the characters a JWT is made of: each match consumes its run, so the scan is linear.
const TOKEN_RUN = /[\w.-]+/g;
const WORD = /\w/;
export const REDACTED = 'REDACTED';
/**
 * The SDK cuts every field to at most 32,768 characters (messages and exceptions, its largest limit,
 * `DataSanitizerValues.MAX_MESSAGE_LENGTH`): what lies beyond would never be sent.
 */
export const MAX_FIELD_LENGTH = 32_768;

export function scrubText(text: string): string {
  return redactJwts(text.replace(PARAM, `$1${REDACTED}`)).replace(BEARER, `$1 ${REDACTED}`);
}

/**
 * Redacts JWT-like tokens (`eyJ…` at a word boundary, a dot, a second segment, and a third when
 * present) without a backtracking pattern: `/\beyJ[\w-]+\.[\w-]+\.[\w-]*\/` is quadratic on
 * `eyJ-eyJ-eyJ-…`. A token cut short (header and payload only) is redacted too: its payload is the
 * part that names the user.
 */
function redactJwts(text: string): string {
  if (!text.includes('eyJ')) return text;
  return text.replace(TOKEN_RUN, (run) => (run.includes('eyJ') ? redactJwtsInRun(run) : run));
}

/** One run of `[\w.-]`: its dot-separated segments, each scanned once. */
function redactJwtsInRun(run: string): string {
  const segments = run.split('.');
  const out: string[] = [];
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] ?? '';
    const start = jwtStart(segment);
    const payload = segments[i + 1];
    if (start < 0 || !payload) {
      out.push(segment);
      continue;
    }
    // Header from `eyJ` on, the payload, and the signature when there is one: all of it goes.
    out.push(segment.slice(0, start) + REDACTED);
    i += segments.length > i + 2 ? 2 : 1;
  }
  return out.join('.');
}

/**
 * Where a JWT header starts in one segment: `eyJ` at a word boundary (the segment's start, whose
 * neighbour is a dot or outside the run, or after `-`) with at least one character after it; else -1.
 * A later `eyJ` in the same segment cannot succeed where the first failed, so only the first counts.
 */
function jwtStart(segment: string): number {
  for (let at = segment.indexOf('eyJ'); at >= 0; at = segment.indexOf('eyJ', at + 1)) {
    const before = at === 0 ? '' : (segment[at - 1] ?? '');
    if (before === '' || !WORD.test(before)) return segment.length > at + 3 ? at : -1;
  }
  return -1;
}

/** Scrubs every string inside a value, in place where it can, and returns the result. */
export function scrubDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return scrubText(value.slice(0, MAX_FIELD_LENGTH)) as T;
  if (depth > 8 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) {
    const items = value as unknown[];
    for (let i = 0; i < items.length; i++) items[i] = scrubDeep(items[i], depth + 1);
    return value;
  }
  const record = value as Record<string, unknown>;
  for (const key of Object.keys(record)) {
    if (/^authorization$/i.test(key)) {
      record[key] = REDACTED;
      continue;
    }
    record[key] = scrubDeep(record[key], depth + 1);
  }
  return value;
}

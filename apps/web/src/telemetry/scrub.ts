/**
 * Removes what must never leave the browser in telemetry: authorization codes, `state`,
 * `session_state`, tokens, and anything that looks like a JWT, from every string an envelope carries
 * (URLs, names, messages, properties), wherever they sit.
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
const PARAM = new RegExp(`([?&#](?:${SECRET_PARAMS.join('|')})=)[^&#\\s"']*`, 'gi');
const JWT = /\beyJ[\w-]+\.[\w-]+\.[\w-]*/g;
const BEARER = /\b(Bearer)\s+[\w\-.~+/]+=*/gi;
export const REDACTED = 'REDACTED';

export function scrubText(text: string): string {
  return text.replace(PARAM, `$1${REDACTED}`).replace(JWT, REDACTED).replace(BEARER, `$1 ${REDACTED}`);
}

/** Scrubs every string inside a value, in place where it can, and returns the result. */
export function scrubDeep<T>(value: T, depth = 0): T {
  if (typeof value === 'string') return scrubText(value) as T;
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

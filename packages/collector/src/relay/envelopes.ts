import { FS, RS, US, type PackedItems } from '../protocol/packed.js';
import { rowLayout } from '../protocol/item-row.js';

/** One accepted item as the relay keeps and forwards it. */
export interface RelayItem {
  /** Its identity as the collector received it (item-identity.ts): what the relay de-duplicates by. */
  key: number;
  /** The envelope's JSON text on one line, carrying the destination's instrumentation key. */
  text: string;
}

const ENVELOPE = rowLayout.findIndex((c) => c.field === 'envelope');
const IKEY = rowLayout.findIndex((c) => c.field === 'iKey');
const ESC = '\u001b';
/** protocol/packed.ts's escapes, undone: ESC followed by e, 0, 1, 2, 3, 4. */
const unescapes: Record<string, string> = {
  e: ESC,
  '0': '\u0000',
  '1': FS,
  '2': '\u001d',
  '3': RS,
  '4': US,
};
// eslint-disable-next-line no-control-regex -- ESC is the point
const unescape = (v: string) => v.replace(/\u001b([e0-4])/g, (_m, c: string) => unescapes[c] ?? c);

/**
 * The envelope texts of packed rows (protocol/packed.ts), each carrying `iKey`. A row's text is the envelope as
 * received (or its compact form, ADR 0015) when it plainly names the destination's key once; otherwise
 * (another accepted key, the same in other letter case, or a text that could name a second key the
 * collector's parse did not keep) it is re-serialised from what was parsed, with the destination's key,
 * so a sender cannot choose the resource its items land in. Raw line breaks in JSON text can only be
 * whitespace between tokens, so they become spaces: each envelope is one line of the stream the
 * ingestion endpoint reads.
 */
export function relayItems(packed: PackedItems, iKey: string): RelayItem[] {
  const rows = packed.chunks.join('').split(RS);
  const items: RelayItem[] = [];
  for (let index = 0; index < packed.count; index++) {
    const row = rows[index] ?? '';
    const escaped = row.startsWith(FS);
    const columns = (escaped ? row.slice(1) : row).split(US);
    const read = (k: number) => {
      const v = columns[k] ?? '';
      return escaped ? unescape(v) : v;
    };
    let text = read(ENVELOPE);
    if (read(IKEY) !== iKey || !namesOneKey(text)) {
      text = withKey(JSON.parse(text) as Record<string, unknown>, iKey);
    } else if (text.includes('\n') || text.includes('\r')) {
      text = text.replace(/[\r\n]/g, ' ');
    }
    items.push({ key: packed.keys[index] ?? 0, text });
  }
  return items;
}

/**
 * Whether `text` can hold no member named `iKey` but one. JSON.parse keeps the last of two members of
 * one name, and another reader may keep the first, or read names without regard to letter case: the
 * text is forwarded as written only when `"ikey"` occurs once in it, in any case, and no `\u` escape
 * could spell another.
 */
function namesOneKey(text: string): boolean {
  const lower = text.toLowerCase();
  if (lower.includes('\\u')) return false;
  const at = lower.indexOf('"ikey"');
  return at >= 0 && at === lower.lastIndexOf('"ikey"');
}

/** The parsed envelope with `iKey` as its only key member (in any letter case), where the first stood. */
function withKey(envelope: Record<string, unknown>, iKey: string): string {
  // fromEntries, not assignment: a member named `__proto__` stays a member.
  const members: [string, unknown][] = [];
  let placed = false;
  for (const [name, value] of Object.entries(envelope)) {
    if (name.toLowerCase() !== 'ikey') members.push([name, value]);
    else if (!placed) {
      members.push(['iKey', iKey]);
      placed = true;
    }
  }
  if (!placed) members.push(['iKey', iKey]);
  return JSON.stringify(Object.fromEntries(members));
}

import { FS, RS, US, type PackedItems } from '../store/packed.js';
import { rowLayout } from '../store/row-layout.js';

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
/** packed.ts's escapes, undone: ESC followed by e, 0, 1, 2, 3, 4. */
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
 * The envelope texts of packed rows (packed.ts), each carrying `iKey`. A row's text is the envelope as
 * received (or its compact form, ADR 0015); one whose key differs (another accepted key, or the same
 * in other letter case) is re-serialised with the destination's, so a sender cannot choose the
 * resource its items land in. Raw line breaks in JSON text can only be whitespace between tokens, so
 * they become spaces: each envelope is one line of the stream the ingestion endpoint reads.
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
    if (read(IKEY) !== iKey) {
      text = JSON.stringify({ ...(JSON.parse(text) as Record<string, unknown>), iKey });
    } else if (text.includes('\n') || text.includes('\r')) {
      text = text.replace(/[\r\n]/g, ' ');
    }
    items.push({ key: packed.keys[index] ?? 0, text });
  }
  return items;
}

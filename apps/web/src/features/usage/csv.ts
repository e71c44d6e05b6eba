/**
 * Tables as CSV files (docs/decisions/0082-csv-downloads.md): RFC 4180 (fields separated by commas,
 * records by CRLF, a field with a comma, a quote, CR or LF quoted and its quotes doubled), UTF-8 with a
 * byte order mark so spreadsheets read it as UTF-8, and every text that a spreadsheet would take for a
 * formula (it starts with `=`, `+`, `-`, `@`, a tab or CR) led by `'`, so opening the file never runs it.
 */

/** One cell: text, a number (written as is: a number is never a formula), or nothing (an empty field). */
export type CsvCell = string | number | boolean | null | undefined;

const FORMULA_START = /^[=+\-@\t\r]/;
const NEEDS_QUOTES = /[",\r\n]/;

/** A text cell as a field: neutralised if it could be a formula, then quoted if it must be. */
export function csvField(cell: CsvCell): string {
  if (cell === null || cell === undefined) return '';
  if (typeof cell === 'number') return Number.isFinite(cell) ? String(cell) : '';
  if (typeof cell === 'boolean') return cell ? 'true' : 'false';
  const text = FORMULA_START.test(cell) ? `'${cell}` : cell;
  return NEEDS_QUOTES.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** The byte order mark that tells a spreadsheet the file is UTF-8. */
export const BOM = '\uFEFF';

/** A header record and the data records, as the text of a CSV file (BOM first, CRLF after every record). */
export function toCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  return BOM + [header, ...rows].map((record) => `${record.map(csvField).join(',')}\r\n`).join('');
}

/** `pages_2026-11-25T0400Z_2026-11-26T0400Z.csv`: the table, and the period's bounds (UTC, minutes). */
export function csvFileName(table: string, period: { from: string; to: string }): string {
  const stamp = (iso: string) => iso.slice(0, 16).replace(':', '') + 'Z';
  const name =
    table
      .toLowerCase()
      .replace(/[^a-z0-9]+/g, '-')
      .replace(/^-|-$/g, '') || 'table';
  return `${name}_${stamp(period.from)}_${stamp(period.to)}.csv`;
}

/** Has the browser save the text as a file (a link to a Blob, clicked, then let go). */
export function saveCsv(fileName: string, text: string): void {
  const url = URL.createObjectURL(new Blob([text], { type: 'text/csv;charset=utf-8' }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  link.hidden = true;
  document.body.append(link);
  link.click();
  link.remove();
  // Revoked after the click has been handled: revoking at once can cancel the download in some browsers.
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

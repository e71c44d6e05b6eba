import { csvFileName, saveCsv, toCsv, type CsvCell } from './csv';

/**
 * The one "Download CSV" control every table of the dashboard has: the rows it saves are the API's
 * answer the table shows (raw values: counts, milliseconds, ISO times), not the formatted text.
 */
export function DownloadCsv({
  table,
  period,
  header,
  rows,
}: {
  /** What the table is, for the button's name and the file's ("Pages"). */
  table: string;
  /** The answer's period, for the file name. */
  period: { from: string; to: string };
  header: readonly string[];
  rows: () => readonly (readonly CsvCell[])[];
}) {
  return (
    <button
      type="button"
      className="link-button csv-button"
      onClick={() => saveCsv(csvFileName(table, period), toCsv(header, rows()))}
    >
      {/* Named by what is seen and then which table ("Download CSV of Pages"): WCAG 2.5.3, label in name. */}
      Download CSV<span className="visually-hidden"> of {table}</span>
    </button>
  );
}

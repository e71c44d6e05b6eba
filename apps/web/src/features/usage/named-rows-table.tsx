import type { ReactNode } from 'react';
import type { CsvCell } from './csv';
import { DownloadCsv } from './download-csv';
import { LongText } from './long-text';

/**
 * A table of named things (pages, custom events): the name heads each row, the figures follow, one
 * per column after the first; with its CSV download.
 */
export function NamedRowsTable<Row extends { name: string }>({
  testId,
  title,
  period,
  columns,
  rows,
  cells,
  csv,
  name,
}: {
  testId: string;
  /** The table's name, for its CSV file. */
  title: string;
  period: { from: string; to: string };
  /** The name column's heading, then one heading per figure. */
  columns: readonly [string, ...string[]];
  rows: readonly Row[];
  cells: (row: Row) => readonly ReactNode[];
  /** A row's values for the CSV file after the name (raw, one per column after the first). */
  csv: (row: Row) => readonly CsvCell[];
  /** The name cell's content, when it is more than the name (a button); the CSV keeps the name. */
  name?: (row: Row) => ReactNode;
}) {
  return (
    <>
      <table data-testid={testId}>
        <thead>
          <tr>
            {columns.map((column) => (
              <th key={column} scope="col">
                {column}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={row.name}>
              <th scope="row">{name ? name(row) : <LongText text={row.name} />}</th>
              {cells(row).map((cell, index) => (
                <td key={columns[index + 1]}>{cell}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
      <DownloadCsv
        table={title}
        period={period}
        header={columns}
        rows={() => rows.map((row) => [row.name, ...csv(row)])}
      />
    </>
  );
}

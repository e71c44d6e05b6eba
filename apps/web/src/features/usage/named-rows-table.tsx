import type { ReactNode } from 'react';
import { LongText } from './long-text';

/**
 * A table of named things (pages, custom events): the name heads each row, the figures follow, one
 * per column after the first.
 */
export function NamedRowsTable<Row extends { name: string }>({
  testId,
  columns,
  rows,
  cells,
}: {
  testId: string;
  /** The name column's heading, then one heading per figure. */
  columns: readonly [string, ...string[]];
  rows: readonly Row[];
  cells: (row: Row) => readonly ReactNode[];
}) {
  return (
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
            <th scope="row">
              <LongText text={row.name} />
            </th>
            {cells(row).map((cell, index) => (
              <td key={columns[index + 1]}>{cell}</td>
            ))}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

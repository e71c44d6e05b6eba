import type { Estimate } from '@gatehouse/api-contract';
import type { ApiQuery } from '../../auth/use-api';
import { EstimatesNote, estimatedHeading } from './estimates-note';
import { NamedRowsTable } from './named-rows-table';
import { Panel } from './panel';

/** What a table panel's endpoint answers: its period, its lists of rows, which figures are estimates. */
interface Answer {
  from: string;
  to: string;
  estimates: readonly Estimate[];
}
/** The answer's lists of named rows (`pages`, `events`). */
type ListKey<Data> = {
  [K in keyof Data]: Data[K] extends readonly { name: string }[] ? K : never;
}[keyof Data];
type RowOf<Data, List extends keyof Data> = Data[List] extends readonly (infer Row)[] ? Row : never;
/** A row's figures: its numbers, measured or not (`null`). */
type FigureKey<Row> = {
  [K in keyof Row]: Row[K] extends number | null ? K : never;
}[keyof Row] &
  string;

/** One column of figures: a number of each row, shown formatted and downloaded raw. */
export type Figure<Row> = {
  [K in FigureKey<Row>]: {
    key: K;
    heading: string;
    format: (value: Row[K]) => string;
    /**
     * Set for a figure the answer may estimate: its name in the note below the table (ADR 0074); its
     * heading is marked when the answer says it is one.
     */
    estimate?: string;
  };
}[FigureKey<Row>];

/** Figure once its row's type has done its work: what the table reads of it. */
interface ColumnOfFigures {
  key: string;
  heading: string;
  format: (value: number | null) => string;
  estimate?: string;
}

/**
 * A panel that is one table of named things (pages, custom events): one list of the answer, a column per
 * figure, the CSV download, and the note on its estimated figures.
 */
export function NamedRowsPanel<Data extends Answer, List extends ListKey<Data>>({
  title,
  testId,
  query,
  rows,
  nameHeading,
  figures,
}: {
  title: string;
  testId: string;
  query: ApiQuery<Data> & { reload: () => void };
  /** Which list of the answer the table shows. */
  rows: List;
  /** The heading of the names' column. */
  nameHeading: string;
  figures: readonly Figure<RowOf<Data, List>>[];
}) {
  const rowsOf = (data: Data) => data[rows] as readonly ({ name: string } & Record<string, number | null>)[];
  // The caller's figures were checked against its rows' type; here every figure is a number or null.
  const columns = figures as unknown as readonly ColumnOfFigures[];
  const noteHeadings = Object.fromEntries(
    columns.flatMap(({ key, estimate }) => (estimate === undefined ? [] : [[key, estimate]])),
  );
  return (
    <Panel title={title} level={3} query={query} isEmpty={(data) => rowsOf(data).length === 0}>
      {(data) => (
        <>
          <NamedRowsTable
            testId={testId}
            title={title}
            period={data}
            columns={[
              nameHeading,
              ...columns.map(({ key, heading, estimate }) =>
                estimate === undefined ? heading : estimatedHeading(heading, key, data.estimates),
              ),
            ]}
            rows={rowsOf(data)}
            cells={(row) => columns.map(({ key, format }) => format(row[key] ?? null))}
            csv={(row) => columns.map(({ key }) => row[key])}
          />
          <EstimatesNote estimates={data.estimates} headings={noteHeadings} />
        </>
      )}
    </Panel>
  );
}

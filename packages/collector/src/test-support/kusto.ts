import { createRequire } from 'node:module';
import path from 'node:path';
import { appTables } from './app-tables.js';

/*
 * Each query is parsed and bound by Microsoft's Kusto language service (@kusto/language-service-next,
 * the parser and binder of Azure Data Explorer's editors, compiled to JavaScript) against the tables'
 * real columns: a misspelt column, a wrong function, a type mismatch or a reserved word is an error.
 */
const require = createRequire(import.meta.url);
const dir = path.dirname(require.resolve('@kusto/language-service-next/package.json'));
require(path.join(dir, 'bridge.js'));
require(path.join(dir, 'Kusto.Language.Bridge.js'));

interface KustoList<T> {
  Count: number;
  getItem(i: number): T;
}
/** The little of Kusto.Language's API used here (its own .d.ts types the bridge's globals loosely). */
interface KustoLanguage {
  Symbols: {
    DatabaseSymbol: { $ctor1: new (name: string, members: unknown[], isOpen: boolean) => unknown };
    TableSymbol: { $ctor7: new (name: string, schema: string, description: null) => unknown };
  };
  GlobalState: { Default: { WithDatabase(database: unknown): unknown } };
  KustoCode: {
    ParseAndAnalyze(
      query: string,
      globals: unknown,
    ): { GetDiagnostics(): KustoList<{ Severity: string; Message: string }> };
  };
}
const Kusto = (globalThis as unknown as { Kusto: { Language: KustoLanguage } }).Kusto.Language;
const database = new Kusto.Symbols.DatabaseSymbol.$ctor1(
  'workspace',
  Object.entries(appTables).map(([name, schema]) => new Kusto.Symbols.TableSymbol.$ctor7(name, schema, null)),
  false,
);
const globals = Kusto.GlobalState.Default.WithDatabase(database);

/** The language service's diagnostics of `query` (errors and warnings). */
export function diagnose(query: string): string[] {
  const list = Kusto.KustoCode.ParseAndAnalyze(query, globals).GetDiagnostics();
  return Array.from({ length: list.Count }, (_, i) => list.getItem(i)).map(
    (d) => `${d.Severity}: ${d.Message}`,
  );
}

/**
 * The columns of the table `query` answers, as the language service infers them: what a row of the
 * workspace's answer is keyed by.
 */
export function resultColumns(query: string): string[] {
  const code = Kusto.KustoCode.ParseAndAnalyze(query, globals) as unknown as {
    ResultType: { Columns?: KustoList<{ Name: string }> } | null;
  };
  const columns = code.ResultType?.Columns;
  return columns ? Array.from({ length: columns.Count }, (_, i) => columns.getItem(i).Name) : [];
}

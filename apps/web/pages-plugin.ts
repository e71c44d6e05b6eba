import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parseAst, type Plugin, type ViteDevServer } from 'vite';

/** The route table's module: `import { pages } from 'virtual:gatehouse-pages'` (src/app/app.tsx). */
export const PAGES_MODULE = 'virtual:gatehouse-pages';
const RESOLVED = `\0${PAGES_MODULE}`;
/** A page is a file named `*-page.tsx` under src/features/ (its tests, `*-page.test.tsx`, are not); it exports its component as default and its `route`. */
export const PAGE_FILE = /-page\.tsx$/;

type Literal = string | number | boolean | null | Literal[] | { [key: string]: Literal };
/** Enough of an ESTree node for reading literals (the parser's own types are not a dependency of ours). */
interface Node {
  type: string;
  start: number;
  end: number;
  [key: string]: unknown;
}

/**
 * The route table, made from the pages themselves (ADR 0091): each page file says its path, page view name,
 * `access` and link (`export const route = { … } satisfies PageRoute`), and this plugin reads that object from
 * the file's source, without running it, into a table whose pages load on demand (`lazy(() => import(…))`),
 * but for those marked `eager` (the home page, which the first render shows). Adding a page is adding its
 * file: no row to add elsewhere. In the page's own module the `route` export is dropped (it is read here
 * only), so the module exports only its component and React's fast refresh keeps state on an edit.
 */
export function pagesPlugin({ root = join(import.meta.dirname, 'src/features') } = {}): Plugin {
  let last: string | undefined;
  const reloadIfChanged = (server: ViteDevServer, file: string) => {
    if (!isPage(root, file)) return false;
    const code = safely(() => pagesModule(root));
    if (code === last) return false;
    const module = server.moduleGraph.getModuleById(RESOLVED);
    if (module) server.moduleGraph.invalidateModule(module);
    server.ws.send({ type: 'full-reload' });
    return true;
  };
  return {
    name: 'gatehouse-pages',
    enforce: 'pre',
    resolveId(id) {
      return id === PAGES_MODULE ? RESOLVED : undefined;
    },
    load(id) {
      if (id !== RESOLVED) return undefined;
      last = pagesModule(root);
      return last;
    },
    transform(code, id) {
      if (!isPage(root, id)) return undefined;
      const found = findRoute(code, id);
      // `export` becomes blanks of the same length: nothing moves, so the source map stays (`map: null`).
      return found
        ? {
            code: code.slice(0, found.exportStart) + ' '.repeat(6) + code.slice(found.exportStart + 6),
            map: null,
          }
        : undefined;
    },
    configureServer(server) {
      // A page added or removed changes the table; the page's own edits change it only when its route does.
      for (const event of ['add', 'unlink'] as const)
        server.watcher.on(event, (file: string) => reloadIfChanged(server, file));
    },
    // An editor's save may truncate the file before writing it: Vite's `read` waits until it has content
    // again, so the table is not read from an empty page (a route missing: a needless full reload).
    async handleHotUpdate({ file, server, read }) {
      if (isPage(root, file)) await read();
      return reloadIfChanged(server, file) ? [] : undefined;
    },
  };
}

function isPage(root: string, file: string): boolean {
  const path = relative(root, file.split('?')[0] ?? file);
  return PAGE_FILE.test(path) && !path.startsWith('..');
}

/** The error of a bad route file as the module's text, so a dev server shows it rather than dying. */
function safely(make: () => string): string {
  try {
    return make();
  } catch (error) {
    return `throw new Error(${JSON.stringify((error as Error).message)});`;
  }
}

/** The table's module: every page's route with its component, sorted by path. */
export function pagesModule(root: string): string {
  const pages = readdirSync(root, { recursive: true, encoding: 'utf8' })
    .filter((path) => PAGE_FILE.test(path))
    .map((path) => join(root, path))
    .map((file) => ({ file, route: readRoute(readFileSync(file, 'utf8'), file) }))
    .sort((a, b) => (a.route.path < b.route.path ? -1 : 1));
  const seen = new Map<string, string>();
  for (const { file, route } of pages) {
    const other = seen.get(route.path);
    if (other) throw new Error(`${file}: the path ${route.path} is already the route of ${other}.`);
    seen.set(route.path, file);
  }
  const imports = pages.flatMap(({ file, route }, index) =>
    route.eager ? [`import Page${index} from ${JSON.stringify(file)};`] : [],
  );
  const rows = pages.map(
    ({ file, route }, index) =>
      `  { ...${JSON.stringify(route)}, Page: ${route.eager ? `Page${index}` : `lazy(() => import(${JSON.stringify(file)}))`} },`,
  );
  return [`import { lazy } from 'react';`, ...imports, 'export const pages = [', ...rows, '];', ''].join(
    '\n',
  );
}

interface FoundRoute {
  /** Where `export` of `export const route = …` starts. */
  exportStart: number;
  value: Node;
}

function findRoute(source: string, file: string): FoundRoute | undefined {
  const program = parseAst(source, { lang: 'tsx' }, file) as unknown as { body: Node[] };
  for (const statement of program.body) {
    if (statement.type !== 'ExportNamedDeclaration') continue;
    const declaration = statement.declaration as Node | null;
    if (declaration?.type !== 'VariableDeclaration') continue;
    for (const declarator of declaration.declarations as Node[]) {
      const id = declarator.id as Node;
      if (id.type === 'Identifier' && id.name === 'route' && declarator.init)
        return { exportStart: statement.start, value: declarator.init as Node };
    }
  }
  return undefined;
}

/** A page's `route`, read from its source: an object written with literals only. */
export function readRoute(
  source: string,
  file: string,
): { path: string; eager?: boolean } & Record<string, Literal> {
  const found = findRoute(source, file);
  if (!found)
    throw new Error(`${file}: a page exports its route (\`export const route = { path, name, access }\`).`);
  const route = literal(found.value, file, 'route');
  if (typeof route !== 'object' || route === null || Array.isArray(route) || typeof route.path !== 'string')
    throw new Error(`${file}: the route is an object with a path.`);
  return route as { path: string } & Record<string, Literal>;
}

function literal(node: Node, file: string, at: string): Literal {
  switch (node.type) {
    case 'TSSatisfiesExpression':
    case 'TSAsExpression':
      return literal(node.expression as Node, file, at);
    case 'Literal':
      return node.value as Literal;
    case 'TemplateLiteral':
      if ((node.expressions as Node[]).length === 0)
        return (node.quasis as { value: { cooked: string } }[])[0]?.value.cooked ?? '';
      break;
    case 'ArrayExpression':
      return (node.elements as Node[]).map((element, index) => literal(element, file, `${at}[${index}]`));
    case 'ObjectExpression':
      return Object.fromEntries(
        (node.properties as Node[]).map((property) => {
          const key = property.key as Node | undefined;
          const name =
            key?.type === 'Identifier' ? key.name : key?.type === 'Literal' ? key.value : undefined;
          if (property.type !== 'Property' || property.computed || typeof name !== 'string')
            throw new Error(
              `${file}: ${at} has a property that is not a plain name (read before the page runs).`,
            );
          return [name, literal(property.value as Node, file, `${at}.${name}`)];
        }),
      );
  }
  throw new Error(`${file}: ${at} is not a literal (the route is read from the file before the page runs).`);
}

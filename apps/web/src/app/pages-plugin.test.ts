// @vitest-environment node
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { PAGES_MODULE, pagesModule, pagesPlugin, readRoute } from '../../pages-plugin';
import { navigation } from './app';

const page = (route: string, component = 'export default function P() { return <p>page</p>; }') =>
  `import type { PageRoute } from '../../shared/page-route';\n\nexport const route = ${route} satisfies PageRoute;\n\n${component}\n`;

function features(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), 'gatehouse-pages-'));
  for (const [path, source] of Object.entries(files)) {
    mkdirSync(join(root, path, '..'), { recursive: true });
    writeFileSync(join(root, path), source);
  }
  return root;
}

describe("a page's route, read from its source before it runs", () => {
  it('reads the literal object, whatever quotes and type assertions it is written with', () => {
    const source = page(
      "{ path: `/reports`, 'name': \"Reports\", access: 'admin' as const, nav: { label: 'Reports', order: 50 } }",
    );
    expect(readRoute(source, 'reports-page.tsx')).toEqual({
      path: '/reports',
      name: 'Reports',
      access: 'admin',
      nav: { label: 'Reports', order: 50 },
    });
  });

  it('refuses what only running the page would tell, naming the file and the field', () => {
    expect(() => readRoute(page("{ path: base + '/x', name: 'X', access: 'public' }"), 'x-page.tsx')).toThrow(
      'x-page.tsx: route.path is not a literal',
    );
    expect(() => readRoute(page("{ [key]: '/x', name: 'X', access: 'public' }"), 'x-page.tsx')).toThrow(
      'x-page.tsx: route has a property that is not a plain name',
    );
    expect(() => readRoute(page("{ ...base, path: '/x' }"), 'x-page.tsx')).toThrow('not a plain name');
    expect(() => readRoute(page("{ name: 'X', access: 'public' }"), 'x-page.tsx')).toThrow(
      'an object with a path',
    );
  });

  it('refuses a page file that does not say its route', () => {
    expect(() => readRoute('export default function P() { return null; }', 'x-page.tsx')).toThrow(
      'x-page.tsx: a page exports its route',
    );
  });
});

describe('the route table, made from the page files', () => {
  it('lists every page by path, loading each on demand but those marked eager', () => {
    const root = features({
      'reports/reports-page.tsx': page("{ path: '/reports', name: 'Reports', access: 'admin' }"),
      'home/home-page.tsx': page("{ path: '/', name: 'Home', access: 'public', eager: true }"),
      'reports/chart.tsx': 'export const route = 1;',
      'reports/reports-page.test.tsx': 'export {};',
    });
    const code = pagesModule(root);
    expect(code).toContain(`import Page0 from ${JSON.stringify(join(root, 'home/home-page.tsx'))};`);
    const rows = code.split('\n').filter((line) => line.trimStart().startsWith('{ ...'));
    expect(rows).toEqual([
      '  { ...{"path":"/","name":"Home","access":"public","eager":true}, Page: Page0 },',
      `  { ...{"path":"/reports","name":"Reports","access":"admin"}, Page: lazy(() => import(${JSON.stringify(join(root, 'reports/reports-page.tsx'))})) },`,
    ]);
  });

  it('refuses two pages with one path', () => {
    const root = features({
      'a/a-page.tsx': page("{ path: '/a', name: 'A', access: 'public' }"),
      'b/b-page.tsx': page("{ path: '/a', name: 'B', access: 'public' }"),
    });
    expect(() => pagesModule(root)).toThrow(
      /b-page\.tsx: the path \/a is already the route of .*a-page\.tsx/,
    );
  });

  it('an edit that keeps the route reloads nothing, though the save truncates the file first', async () => {
    const source = page("{ path: '/a', name: 'A', access: 'public' }");
    const root = features({ 'a/a-page.tsx': source });
    const plugin = pagesPlugin({ root });
    (plugin.load as (id: string) => string)(`\0${PAGES_MODULE}`);
    const sent: unknown[] = [];
    const server = {
      moduleGraph: { getModuleById: () => undefined },
      ws: { send: (m: unknown) => sent.push(m) },
    };
    const hotUpdate = plugin.handleHotUpdate as (context: object) => Promise<[] | undefined>;
    const file = join(root, 'a/a-page.tsx');
    const edited = source.replace('<p>page</p>', '<p>edited</p>');
    // As an editor saves: the file empty when the change is seen, its content there once Vite reads it.
    writeFileSync(file, '');
    const read = () => (writeFileSync(file, edited), Promise.resolve(edited));
    expect(await hotUpdate({ file, server, read })).toBeUndefined();
    expect(sent).toEqual([]);
    // A changed route does reload the page.
    writeFileSync(file, edited.replace("'/a'", "'/b'"));
    expect(await hotUpdate({ file, server, read: () => Promise.resolve('') })).toEqual([]);
    expect(sent).toEqual([{ type: 'full-reload' }]);
  });

  it("drops the route from the page's own module, moving nothing, so the module exports only its component", () => {
    const root = features({});
    const plugin = pagesPlugin({ root });
    const transform = plugin.transform as (
      code: string,
      id: string,
    ) => { code: string; map: null } | undefined;
    const source = page("{ path: '/a', name: 'A', access: 'public' }");
    const result = transform(source, join(root, 'a/a-page.tsx'));
    expect(result?.code).toHaveLength(source.length);
    expect(result?.code).toContain('\n       const route = {');
    expect(result?.code).toContain('export default function P()');
    expect(transform(source, join(root, 'a/chart.tsx'))).toBeUndefined();
    expect(transform(source, join(root, '../elsewhere/a-page.tsx'))).toBeUndefined();
  });

  it("gives the app's own pages their links in the navigation, in order", () => {
    expect(navigation).toEqual([
      { href: '/', label: 'Home', access: 'public' },
      { href: '/profile', label: 'Profile', access: 'signed-in' },
      { href: '/usage', label: 'Usage', access: 'admin' },
      { href: '/diagnostics', label: 'Diagnostics', access: 'admin' },
    ]);
  });
});

/** The route table made from the pages' own `route` exports (pages-plugin.ts, ADR 0091). */
declare module 'virtual:gatehouse-pages' {
  // An ambient module cannot `import` by a relative path; an import type can.
  // eslint-disable-next-line @typescript-eslint/consistent-type-imports
  type PageRoute = import('../shared/page-route').PageRoute;
  // eslint-disable-next-line @typescript-eslint/consistent-type-imports
  export const pages: (PageRoute & { Page: import('react').ComponentType })[];
}

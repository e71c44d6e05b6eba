// Import boundaries and cycles for the SPA and the collector, without a native module resolver: eslint-plugin-import-x needs
// unrs-resolver, whose platform packages the lockfile cannot hold for every OS here, which broke `npm ci`
// (docs/decisions/0028). The SPA only imports relative paths and packages, so a small resolver suffices.
import { existsSync, readFileSync, realpathSync, statSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

const EXTENSIONS = ['.ts', '.tsx', '.mts', '.js', '.jsx', '.mjs'];

/** The file a relative specifier names, as bundler resolution finds it (extension or index omitted). */
function resolveRelative(fromFile, specifier) {
  const base = path.resolve(path.dirname(fromFile), specifier);
  // A Node package's TypeScript names its modules as they are emitted (`./store.js` for `./store.ts`).
  const emitted = /\.(m?)js$/.exec(base);
  const candidates = [
    base,
    ...(emitted ? [`${base.slice(0, -emitted[0].length)}.${emitted[1]}ts`] : []),
    ...EXTENSIONS.map((ext) => base + ext),
    ...EXTENSIONS.map((ext) => path.join(base, `index${ext}`)),
  ];
  return candidates.find((file) => existsSync(file) && statSync(file).isFile());
}

/** The real folder of a package (a workspace package resolves to its own folder, not node_modules). */
function resolvePackage(fromFile, specifier) {
  const parts = specifier.split('/');
  const name = specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0];
  for (let dir = path.dirname(fromFile); ; dir = path.dirname(dir)) {
    const candidate = path.join(dir, 'node_modules', name);
    if (existsSync(candidate)) return realpathSync(candidate);
    if (path.dirname(dir) === dir) return undefined;
  }
}

function resolveImport(fromFile, specifier) {
  if (specifier.startsWith('.') || path.isAbsolute(specifier)) return resolveRelative(fromFile, specifier);
  if (specifier.startsWith('node:')) return undefined;
  return resolvePackage(fromFile, specifier);
}

const isInside = (file, dir) => {
  const relative = path.relative(dir, file);
  return relative === '' || (!relative.startsWith('..') && !path.isAbsolute(relative));
};

const asList = (value) => (Array.isArray(value) ? value : [value]);

/**
 * Calls `visit(specifier, node, typeOnly)` for every import, re-export and `import()` in an ESLint AST.
 * Only `import type` / `export type` are type-only: with `verbatimModuleSyntax`, `import { type A }` still
 * loads the module at run time.
 */
function eslintImportVisitor(visit) {
  const fromSource = (node, typeOnly) => {
    if (node.source && typeof node.source.value === 'string') visit(node.source.value, node, typeOnly);
  };
  return {
    ImportDeclaration: (node) => fromSource(node, node.importKind === 'type'),
    ExportNamedDeclaration: (node) => fromSource(node, node.exportKind === 'type'),
    ExportAllDeclaration: (node) => fromSource(node, node.exportKind === 'type'),
    ImportExpression: (node) => {
      if (node.source.type === 'Literal' && typeof node.source.value === 'string') {
        visit(node.source.value, node, false);
      }
    },
  };
}

const restrictedPaths = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid imports from one folder into another (layers, feature isolation).' },
    schema: [
      {
        type: 'object',
        properties: {
          zones: {
            type: 'array',
            items: {
              type: 'object',
              properties: {
                target: { type: ['string', 'array'] },
                from: { type: ['string', 'array'] },
                except: { type: 'array', items: { type: 'string' } },
                message: { type: 'string' },
              },
              required: ['target', 'from'],
              additionalProperties: false,
            },
          },
        },
        required: ['zones'],
        additionalProperties: false,
      },
    ],
    messages: { restricted: 'Importing {{imported}} here is not allowed. {{message}}' },
  },
  create(context) {
    const file = context.filename;
    const root = context.cwd;
    const zones = context.options[0].zones.filter((zone) =>
      asList(zone.target).some((target) => isInside(file, path.resolve(root, target))),
    );
    if (zones.length === 0) return {};
    return eslintImportVisitor((specifier, node) => {
      const imported = resolveImport(file, specifier);
      if (imported === undefined) return;
      for (const zone of zones) {
        const blocked = asList(zone.from).some((from) => {
          const fromDir = path.resolve(root, from);
          if (!isInside(imported, fromDir)) return false;
          return !(zone.except ?? []).some((except) => isInside(imported, path.resolve(fromDir, except)));
        });
        if (blocked) {
          context.report({
            node,
            messageId: 'restricted',
            data: { imported: specifier, message: zone.message ?? '' },
          });
          return;
        }
      }
    });
  },
};

/** Files read once per lint run; a file's runtime imports (as for the current file, see above). */
const importsCache = new Map();

function runtimeImportsOf(file) {
  const mtime = statSync(file).mtimeMs;
  const cached = importsCache.get(file);
  if (cached && cached.mtime === mtime) return cached.imports;
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  const specifiers = [];
  const walk = (node) => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      if (node.importClause?.isTypeOnly !== true) specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isExportDeclaration(node) &&
      node.moduleSpecifier !== undefined &&
      ts.isStringLiteral(node.moduleSpecifier) &&
      !node.isTypeOnly
    ) {
      specifiers.push(node.moduleSpecifier.text);
    } else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] !== undefined &&
      ts.isStringLiteralLike(node.arguments[0])
    ) {
      specifiers.push(node.arguments[0].text);
    }
    ts.forEachChild(node, walk);
  };
  walk(source);
  const imports = specifiers
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => resolveRelative(file, specifier))
    .filter((resolved) => resolved !== undefined && !resolved.includes(`${path.sep}node_modules${path.sep}`));
  importsCache.set(file, { mtime, imports });
  return imports;
}

/** The import chain from `start` back to `target`, or undefined when there is none. */
function findPath(start, target) {
  const seen = new Set();
  const stack = [[start, [start]]];
  while (stack.length > 0) {
    const [file, route] = stack.pop();
    if (file === target) return route;
    if (seen.has(file)) continue;
    seen.add(file);
    for (const next of runtimeImportsOf(file)) stack.push([next, [...route, next]]);
  }
  return undefined;
}

const noCycle = {
  meta: {
    type: 'problem',
    docs: { description: 'Forbid a module from importing, directly or not, a module that imports it.' },
    schema: [],
    messages: { cycle: 'Import cycle: {{route}}.' },
  },
  create(context) {
    const file = context.filename;
    const root = context.cwd;
    return eslintImportVisitor((specifier, node, typeOnly) => {
      if (typeOnly || !specifier.startsWith('.')) return;
      const imported = resolveRelative(file, specifier);
      if (imported === undefined) return;
      const route = findPath(imported, file);
      if (route === undefined) return;
      const names = [file, ...route].map((entry) => path.relative(root, entry));
      context.report({ node, messageId: 'cycle', data: { route: names.join(' -> ') } });
    });
  },
};

export default {
  meta: { name: 'layers' },
  rules: { 'restricted-paths': restrictedPaths, 'no-cycle': noCycle },
};

import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import layers from './eslint-plugin-layers.mjs';

let root: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'layers-'));
});
afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

async function writeFiles(files: Record<string, string>): Promise<void> {
  for (const [name, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(root, name)), { recursive: true });
    await writeFile(path.join(root, name), text);
  }
}

/** Lints `file` in the fixture and returns `ruleId: message` for each problem. */
async function lint(file: string): Promise<string[]> {
  const eslint = new ESLint({
    cwd: root,
    overrideConfigFile: true,
    overrideConfig: [
      {
        files: ['**/*.ts'],
        languageOptions: { parser: tseslint.parser },
        plugins: { layers },
        rules: {
          'layers/no-cycle': 'error',
          'layers/restricted-paths': [
            'error',
            {
              zones: [
                { target: './src/auth', from: './src/features', message: 'No features here.' },
                {
                  target: './src/features/home',
                  from: './src/features',
                  except: ['./home'],
                  message: 'One feature only.',
                },
              ],
            },
          ],
        },
      },
    ],
  });
  const [result] = await eslint.lintFiles([path.join(root, file)]);
  return (result?.messages ?? []).map((message) => `${message.ruleId ?? 'fatal'}: ${message.message}`);
}

describe('layers/restricted-paths', () => {
  it('refuses an import, a re-export and an import() from a forbidden folder, extension and index omitted', async () => {
    await writeFiles({
      'src/features/usage/index.ts': 'export const usage = 1;\n',
      'src/features/usage/format.ts': 'export const format = 1;\n',
      'src/auth/session.ts': [
        "import { usage } from '../features/usage';",
        "export { format } from '../features/usage/format';",
        "export const later = import('../features/usage/format');",
        'export const value = usage;',
      ].join('\n'),
    });
    const problems = await lint('src/auth/session.ts');
    expect(problems).toEqual([
      'layers/restricted-paths: Importing ../features/usage here is not allowed. No features here.',
      'layers/restricted-paths: Importing ../features/usage/format here is not allowed. No features here.',
      'layers/restricted-paths: Importing ../features/usage/format here is not allowed. No features here.',
    ]);
  });

  it('lets a feature import its own files but not another feature', async () => {
    await writeFiles({
      'src/features/home/parts/title.ts': 'export const title = 1;\n',
      'src/features/usage/format.ts': 'export const format = 1;\n',
      'src/features/home/home-page.ts': [
        "import { title } from './parts/title';",
        "import { format } from '../usage/format';",
        'export const page = title + format;',
      ].join('\n'),
    });
    expect(await lint('src/features/home/home-page.ts')).toEqual([
      'layers/restricted-paths: Importing ../usage/format here is not allowed. One feature only.',
    ]);
  });

  it('finds a package linked into node_modules by its real folder', async () => {
    await writeFiles({
      'src/features/usage/package.json': '{ "name": "usage-feature" }\n',
      'src/features/usage/index.ts': 'export const usage = 1;\n',
      'src/auth/session.ts': "import { usage } from 'usage-feature';\nexport const value = usage;\n",
    });
    const { symlink } = await import('node:fs/promises');
    await mkdir(path.join(root, 'node_modules'));
    await symlink(path.join(root, 'src/features/usage'), path.join(root, 'node_modules/usage-feature'));
    expect(await lint('src/auth/session.ts')).toEqual([
      'layers/restricted-paths: Importing usage-feature here is not allowed. No features here.',
    ]);
  });
});

describe('layers/no-cycle', () => {
  it('reports a cycle through a third module, with its route', async () => {
    await writeFiles({
      'src/a.ts': "import { b } from './b';\nexport const a = () => b();\n",
      'src/b.ts': "import { c } from './c';\nexport const b = () => c();\n",
      'src/c.ts': "export const c = () => import('./a');\n",
    });
    expect(await lint('src/a.ts')).toEqual([
      'layers/no-cycle: Import cycle: src/a.ts -> src/b.ts -> src/c.ts -> src/a.ts.',
    ]);
  });

  it('ignores `import type` and `export type`, which vanish at run time, but not `import { type A }`', async () => {
    await writeFiles({
      'src/a.ts': "import { b } from './b';\nexport type A = number;\nexport const a = () => b();\n",
      'src/b.ts':
        "import type { A } from './a';\nexport type { A as Again } from './a';\nexport const b = (): A => 1;\n",
    });
    expect(await lint('src/a.ts')).toEqual([]);
    expect(await lint('src/b.ts')).toEqual([]);
    await writeFiles({ 'src/b.ts': "import { type A } from './a';\nexport const b = (): A => 1;\n" });
    expect(await lint('src/b.ts')).toEqual([
      'layers/no-cycle: Import cycle: src/b.ts -> src/a.ts -> src/b.ts.',
    ]);
  });
});

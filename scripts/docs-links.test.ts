import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * The docs keep pointing somewhere real: relative Markdown links reach an existing file (and heading), and
 * every decision a doc or a comment names exists in docs/decisions/. Product docs and code speak about the
 * product, never about the tracker's numbers (docs/decisions/0100-docs-index-and-link-check.md).
 */
const ROOT = fileURLToPath(new URL('..', import.meta.url));
const DECISIONS = join(ROOT, 'docs/decisions');

/** Files as git sees them, untracked ones included, so build output and node_modules never count. */
function files(...pathspecs: string[]): string[] {
  const out = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...pathspecs],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  return [...new Set(out.split('\n').filter((file) => file !== '' && existsSync(join(ROOT, file))))].sort();
}

// A pathspec's `*` matches `/` too: `docs/*.md` is every Markdown file under docs/.
const docs = files('README.md', 'docs/*.md');
const sources = files(
  ...['apps', 'packages', 'scripts', 'e2e', 'bench'].flatMap((dir) =>
    ['ts', 'tsx', 'mjs', 'css', 'md'].map((ext) => `${dir}/*.${ext}`),
  ),
).filter((file) => file !== 'scripts/docs-links.test.ts');

const decisionNumbers = new Set(
  readdirSync(DECISIONS)
    .map((name) => /^(\d{4})-.*\.md$/.exec(name)?.[1])
    .filter((n) => n !== undefined),
);

/** Lines of a Markdown file with fenced blocks and code spans blanked: examples there are not links. */
function proseLines(text: string): string[] {
  let fenced = false;
  return text.split('\n').map((line) => {
    if (/^\s*(```|~~~)/.test(line)) {
      fenced = !fenced;
      return '';
    }
    return fenced ? '' : line.replace(/`[^`]*`/g, '');
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
function anchorOf(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\s_-]/gu, '')
    .replace(/\s/g, '-');
}

function anchorsIn(file: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of proseLines(readFileSync(file, 'utf8'))) {
    const heading = /^#{1,6}\s+(.*)$/.exec(line)?.[1];
    if (heading === undefined) continue;
    const base = anchorOf(heading);
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every `](target)` and `[label]: target` on a line, external addresses left out. */
function linkTargets(line: string): string[] {
  const targets = [...line.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1] ?? '');
  const definition = /^\s*\[[^\]]+\]:\s*(\S+)/.exec(line)?.[1];
  if (definition !== undefined) targets.push(definition);
  return targets.filter((target) => target !== '' && !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

function brokenLinks(file: string): string[] {
  const broken: string[] = [];
  proseLines(readFileSync(join(ROOT, file), 'utf8')).forEach((line, index) => {
    for (const target of linkTargets(line)) {
      const [path = '', anchor] = target.split('#', 2);
      const resolved = path === '' ? join(ROOT, file) : join(ROOT, dirname(file), decodeURI(path));
      const where = `${file}:${index + 1}: ${target}`;
      if (!existsSync(resolved)) broken.push(`${where} (no such file)`);
      else if (anchor && resolved.endsWith('.md') && !anchorsIn(resolved).has(anchor))
        broken.push(`${where} (no such heading in ${relative(ROOT, resolved)})`);
    }
  });
  return broken;
}

/**
 * "ADR 0041", "decisions 0041, 0062 and 0063", "ADRs 0074–0076", and paths such as docs/decisions/0016:
 * each number named must be a record.
 */
const DECISION_MENTION =
  /\b(?:ADRs?|decisions?|docs\/decisions\/)\s*(\d{4}(?:(?:\s*[,–-]\s*|\s+and\s+|\s+or\s+|\/)\d{4}\b)*)/gi;

function missingDecisions(file: string): string[] {
  // A mention may run on to a comment's next line ("docs/decisions/0041,\n * 0043"): read past its leader.
  const text = readFileSync(join(ROOT, file), 'utf8').replace(/\n[ \t]*(?:\*(?!\/)|\/\/)/g, '\n');
  const missing: string[] = [];
  for (const mention of text.matchAll(DECISION_MENTION)) {
    const line = text.slice(0, mention.index).split('\n').length;
    for (const number of (mention[1] ?? '').match(/\d{4}/g) ?? []) {
      if (!decisionNumbers.has(number))
        missing.push(`${file}:${line}: ${mention[0].replace(/\s+/g, ' ').trim()}`);
    }
  }
  return missing;
}

/** A tracker's number ("issue 26", "issues 10 and 15") says nothing to a reader of the product. */
const ISSUE_MENTION = /\bissues?\s+#?\d{1,3}\b/gi;

function issueMentions(file: string): string[] {
  const found: string[] = [];
  readFileSync(join(ROOT, file), 'utf8')
    .split('\n')
    .forEach((line, index) => {
      for (const mention of line.matchAll(ISSUE_MENTION)) found.push(`${file}:${index + 1}: ${mention[0]}`);
    });
  return found;
}

describe('the docs', () => {
  it('finds the files it checks', () => {
    expect(docs).toContain('README.md');
    expect(docs).toContain('docs/README.md');
    expect(docs).toContain('docs/decisions/README.md');
    expect(sources.length).toBeGreaterThan(100);
  });

  it('links only to files and headings that exist', () => {
    expect(docs.flatMap(brokenLinks)).toEqual([]);
  });

  it('names only decisions that exist', () => {
    expect([...docs, ...sources].flatMap(missingDecisions)).toEqual([]);
  });

  it('name no issue numbers, nor does the code', () => {
    expect([...docs, ...sources].flatMap(issueMentions)).toEqual([]);
  });
});

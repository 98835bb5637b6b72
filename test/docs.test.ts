import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { expect, test } from 'vitest';
import { SERVICE_VARIABLES } from './helpers.js';

// The documents stay true only if something fails when the code moves away from them: these checks read the docs
// the way a reader follows them (the configuration table, the links, the index) and fail on what would mislead.

const ROOT = resolve(import.meta.dirname, '..');
const DOCS = join(ROOT, 'docs');

/** Files under `dir` (relative to ROOT) whose names end in one of `endings`; node_modules and build output skipped. */
function filesUnder(dir: string, endings: string[]): string[] {
  const absolute = join(ROOT, dir);
  if (!existsSync(absolute)) return [];
  return readdirSync(absolute, { recursive: true, encoding: 'utf8' })
    .filter((name) => !/(^|[/\\])(node_modules|dist)([/\\]|$)/.test(name) && endings.some((ending) => name.endsWith(ending)))
    .map((name) => join(absolute, name))
    .filter((file) => statSync(file).isFile());
}

const markdownFiles = () => [join(ROOT, 'README.md'), ...filesUnder('docs', ['.md'])];

/** Markdown without its fenced code blocks, whose lines are examples (a `# comment` is no heading). */
const withoutFences = (text: string) => text.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, '');
/** Markdown without any code: links inside code blocks or `code spans` are examples, not links. */
const withoutCode = (text: string) => withoutFences(text).replace(/`[^`\n]*`/g, '');

/** GitHub's anchor for each heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2, … */
function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const [, heading] of withoutFences(text).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)) {
    const base = heading
      .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    anchors.add(count === 0 ? base : `${base}-${count}`);
  }
  return anchors;
}

/** Every local link of a Markdown file: its target file (absolute) and anchor. Web addresses are not followed. */
function localLinks(file: string): { target: string; anchor: string | undefined; written: string }[] {
  const links = [];
  for (const [, written] of withoutCode(readFileSync(file, 'utf8')).matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) {
    if (/^[a-z][a-z0-9+.-]*:/i.test(written)) continue; // http:, https:, mailto:
    const [path, anchor] = written.split('#', 2) as [string, string | undefined];
    links.push({ target: path ? resolve(dirname(file), decodeURIComponent(path)) : file, anchor: anchor || undefined, written });
  }
  return links;
}

test('the configuration table documents every variable the service reads, and nothing else', () => {
  const table = readFileSync(join(DOCS, 'operators/configuration.md'), 'utf8');
  const documented = [...table.matchAll(/^\| `([A-Z][A-Z0-9_]*)` \|/gm)].map((m) => m[1]);
  expect(SERVICE_VARIABLES.length).toBeGreaterThan(40);
  expect(documented.filter((name) => !SERVICE_VARIABLES.includes(name)), 'documented but not read by src/config.ts').toEqual([]);
  expect(SERVICE_VARIABLES.filter((name) => !documented.includes(name)), 'read by src/config.ts but not documented').toEqual([]);
  expect(documented.length, 'each variable has one row').toBe(new Set(documented).size);
});

test('every link between the documents resolves, anchors included', () => {
  const broken: string[] = [];
  let checked = 0;
  for (const file of markdownFiles()) {
    for (const { target, anchor, written } of localLinks(file)) {
      checked++;
      const from = relative(ROOT, file);
      if (!existsSync(target)) broken.push(`${from}: ${written} (no such file)`);
      else if (anchor && target.endsWith('.md') && !anchorsOf(readFileSync(target, 'utf8')).has(anchor)) {
        broken.push(`${from}: ${written} (no heading with that anchor)`);
      }
    }
  }
  expect(checked).toBeGreaterThan(100);
  expect(broken).toEqual([]);
});

test('every document under docs/ is reachable from docs/README.md', () => {
  const reached = new Set<string>();
  const queue = [join(DOCS, 'README.md')];
  while (queue.length > 0) {
    const file = queue.pop()!;
    if (reached.has(file) || !existsSync(file)) continue;
    reached.add(file);
    for (const { target } of localLinks(file)) if (target.endsWith('.md') && target.startsWith(DOCS)) queue.push(target);
  }
  const orphans = filesUnder('docs', ['.md']).filter((file) => !reached.has(file)).map((file) => relative(ROOT, file));
  expect(orphans).toEqual([]);
});

test('no document, source file or test names an issue number', () => {
  const files = [
    ...markdownFiles(),
    ...filesUnder('src', ['.ts']),
    ...filesUnder('console/src', ['.ts', '.tsx']),
    ...filesUnder('test', ['.ts']),
    ...filesUnder('bench', ['.ts']),
    ...filesUnder('scripts', ['.mjs', '.ts']),
    ...filesUnder('drizzle', ['.sql']),
  ];
  expect(files.length).toBeGreaterThan(100);
  const found: string[] = [];
  for (const file of files) {
    readFileSync(file, 'utf8').split('\n').forEach((line, index) => {
      if (/\bissues?[\s#-]*\d/i.test(line)) found.push(`${relative(ROOT, file)}:${index + 1}: ${line.trim()}`);
    });
  }
  expect(found).toEqual([]);
});

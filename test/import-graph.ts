// The runtime import graph of a source tree and its cycles (strongly connected components).
// Used by test/structure.test.ts; run it by hand to see the cycles of a tree:
//   npx tsx test/import-graph.ts src console/src
// An edge is an import that stays in the emitted JavaScript: `import type`, imports whose every
// name is `type`, and `export type … from` are left out; a plain `import { A }` counts even when A
// is used only as a type (write `import type` then). Dynamic `import()` is listed apart: it does not
// take part in module evaluation order, but one used to dodge a cycle hides the cycle.
import { readFileSync, readdirSync, statSync, existsSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';

export interface ImportGraph {
  /** every file, relative to the root, with the files it imports at evaluation time */
  edges: Map<string, Set<string>>;
  /** `import('…')` calls between files of the tree: [from, to] */
  dynamic: Array<[string, string]>;
}

function sourceFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...sourceFiles(path));
    else if (/\.(ts|tsx)$/.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

/** Resolves a relative specifier (`./x.js`, `../y`, `./z/index.ts`) to a file of the tree. */
function resolveSpecifier(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith('.')) return undefined;
  const base = resolve(dirname(from), specifier);
  const stem = base.replace(/\.(m?js|jsx|ts|tsx)$/, '');
  for (const candidate of [
    base,
    `${stem}.ts`,
    `${stem}.tsx`,
    join(base, 'index.ts'),
    join(base, 'index.tsx'),
  ]) {
    if (existsSync(candidate) && statSync(candidate).isFile()) return candidate;
  }
  return undefined;
}

/**
 * The import and re-export statements of a module: `import … from '…'`, `export … from '…'`, `import '…'`. A regular
 * expression over the text, not the compiler's parser: loading TypeScript alone takes longer than reading both trees.
 * A statement starts a line; its clause holds only names, braces, commas, `*` and `as`, so a statement never runs on
 * into the next one (a comment's line starts with `//` or `*`).
 */
const STATEMENT = /^[ \t]*(import|export)\s+(?:(type)\s+)?(?:([\w$\s{},*]*?)\s*from\s*)?['"]([^'"\n]+)['"]/gm;
const DYNAMIC = /\bimport\(\s*['"]([^'"\n]+)['"]\s*\)/g;

/**
 * True when a statement stays in the emitted JavaScript: not `import type`/`export type`, and not a list of names
 * that are all `type` (TypeScript drops `import { type A } from` entirely). `export … from` needs a clause.
 */
function isRuntime(keyword: string, typeOnly: string | undefined, clause: string | undefined): boolean {
  if (typeOnly) return false;
  if (clause === undefined) return keyword === 'import'; // `import './side-effect.js'`
  const braces = /^\{([\s\S]*)\}$/.exec(clause.trim());
  if (!braces) return true; // a default or namespace import, `export *`
  const names = braces[1]!.split(',').map((name) => name.trim()).filter(Boolean);
  return names.length === 0 || names.some((name) => !/^type\s/.test(name));
}

export function importGraph(root: string, options: { typeImports?: boolean } = {}): ImportGraph {
  const absoluteRoot = resolve(root);
  const edges = new Map<string, Set<string>>();
  const dynamic: Array<[string, string]> = [];
  const name = (file: string) => relative(absoluteRoot, file);
  for (const file of sourceFiles(absoluteRoot)) {
    const text = readFileSync(file, 'utf8');
    const targets = new Set<string>();
    edges.set(name(file), targets);
    for (const [, keyword, typeOnly, clause, specifier] of text.matchAll(STATEMENT)) {
      if (keyword === 'export' && clause === undefined) continue;
      if (!options.typeImports && !isRuntime(keyword!, typeOnly, clause)) continue;
      const target = resolveSpecifier(file, specifier!);
      if (target) targets.add(name(target));
    }
    for (const [, specifier] of text.matchAll(DYNAMIC)) {
      const target = resolveSpecifier(file, specifier!);
      if (target) dynamic.push([name(file), name(target)]);
    }
  }
  return { edges, dynamic };
}

/** Strongly connected components with more than one file (or a file importing itself), largest first. */
export function importCycles(edges: Map<string, Set<string>>): string[][] {
  // Tarjan's algorithm, iterative so that a deep chain cannot overflow the stack.
  let counter = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const components: string[][] = [];
  for (const start of edges.keys()) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; next: Iterator<string> }> = [];
    const visit = (node: string) => {
      index.set(node, counter);
      low.set(node, counter);
      counter++;
      stack.push(node);
      onStack.add(node);
      work.push({ node, next: (edges.get(node) ?? new Set<string>()).values() });
    };
    visit(start);
    while (work.length > 0) {
      const frame = work[work.length - 1]!;
      const step = frame.next.next();
      if (!step.done) {
        const target = step.value;
        if (!index.has(target)) visit(target);
        else if (onStack.has(target)) low.set(frame.node, Math.min(low.get(frame.node)!, index.get(target)!));
        continue;
      }
      work.pop();
      if (work.length > 0) {
        const parent = work[work.length - 1]!.node;
        low.set(parent, Math.min(low.get(parent)!, low.get(frame.node)!));
      }
      if (low.get(frame.node) === index.get(frame.node)) {
        const component: string[] = [];
        let member: string;
        do {
          member = stack.pop()!;
          onStack.delete(member);
          component.push(member);
        } while (member !== frame.node);
        const selfLoop = component.length === 1 && edges.get(frame.node)?.has(frame.node);
        if (component.length > 1 || selfLoop) components.push(component.sort());
      }
    }
  }
  return components.sort((a, b) => b.length - a.length);
}

/** One shortest import path around a component, for a message a person can follow. */
export function cyclePath(edges: Map<string, Set<string>>, component: string[]): string[] {
  const members = new Set(component);
  const start = component[0]!;
  const previous = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift()!;
    for (const target of edges.get(node) ?? []) {
      if (!members.has(target)) continue;
      if (target === start) {
        const path = [start];
        for (let at = node; at !== start; at = previous.get(at)!) path.splice(1, 0, at);
        return [...path, start];
      }
      if (!previous.has(target)) {
        previous.set(target, node);
        queue.push(target);
      }
    }
  }
  return [start];
}

if (process.argv[1] && import.meta.url === pathToFileURL(resolve(process.argv[1])).href) {
  for (const root of process.argv.slice(2)) {
    const { edges, dynamic } = importGraph(root);
    const cycles = importCycles(edges);
    console.log(`${root}: ${edges.size} files, ${cycles.length} cycle(s)` +
      (cycles.length ? `, largest ${cycles[0]!.length} files` : ''));
    for (const component of cycles) {
      console.log(`  ${component.length} files: ${component.join(' ')}`);
      console.log(`    e.g. ${cyclePath(edges, component).join(' → ')}`);
    }
    for (const [from, to] of dynamic) console.log(`  dynamic import: ${from} → ${to}`);
  }
}

import { join } from 'node:path';
import { describe, expect, test } from 'vitest';
import { ROOT } from './compiled.js';
import { cyclePath, importCycles, importGraph } from './import-graph.js';

// Import cycles of the service (src/) and of the console (console/src/): a cycle ties files that look unrelated into
// one unit, so a change in one ripples into the others (and a module may be read before it is initialised). How to
// undo one: move the shared declaration into a small file both sides import (a resource's declaration, a job's
// definition), import a type with `import type`, or pass the thing in. A lazy `import()` does not undo a cycle: it
// counts here too. `npx tsx test/import-graph.ts src console/src` lists the cycles of a tree.

/** A readable account of the cycles: the files of each, and one way around it. */
function describeCycles(edges: Map<string, Set<string>>, cycles: string[][]): string {
  return cycles.map((files) => `${files.length} files: ${files.join(', ')}\n    e.g. ${cyclePath(edges, files).join(' → ')}`).join('\n  ');
}

/** The graph of what a file needs to run: static imports that stay in the JavaScript, and lazy `import()`s. */
function runtimeGraph(root: string) {
  const { edges, dynamic } = importGraph(join(ROOT, root));
  for (const [from, to] of dynamic) edges.get(from)!.add(to);
  return edges;
}

describe.each(['src', 'console/src'])('%s', (root) => {
  test('no file imports itself back, directly or through others (runtime and lazy imports)', () => {
    const edges = runtimeGraph(root);
    const cycles = importCycles(edges);
    expect(cycles, `import cycles in ${root}:\n  ${describeCycles(edges, cycles)}`).toEqual([]);
  });

  // Types count too, with an allowance: Fastify's decorations (src/types.ts) name the types of what they decorate,
  // whose files take the App type from there, and a database client and its prepared statements name each other's types.
  const TYPE_CYCLE_ALLOWANCE = 3;
  test(`with type imports, no cycle holds more than ${TYPE_CYCLE_ALLOWANCE} files`, () => {
    const { edges } = importGraph(join(ROOT, root), { typeImports: true });
    const large = importCycles(edges).filter((files) => files.length > TYPE_CYCLE_ALLOWANCE);
    expect(large, `import cycles (type imports included) in ${root} beyond ${TYPE_CYCLE_ALLOWANCE} files:\n  ${describeCycles(edges, large)}`).toEqual([]);
  });
});

describe('the cycle finder', () => {
  const graph = (pairs: Record<string, string[]>) => new Map(Object.entries(pairs).map(([from, to]) => [from, new Set(to)]));

  test('finds each cycle, largest first, and leaves the files outside any cycle out', () => {
    const edges = graph({ a: ['b'], b: ['c'], c: ['a', 'd'], d: [], e: ['f'], f: ['e'], g: ['g'], h: ['a'] });
    expect(importCycles(edges)).toEqual([['a', 'b', 'c'], ['e', 'f'], ['g']]);
    expect(cyclePath(edges, ['a', 'b', 'c'])).toEqual(['a', 'b', 'c', 'a']);
  });

  test('reads the imports of this repository the way the compiler emits them', () => {
    const { edges, dynamic } = importGraph(join(ROOT, 'src'));
    // A runtime import, a type-only import (left out) and a lazy import (listed apart).
    expect(edges.get('app.ts')).toContain('jobs/index.ts');
    expect(edges.get('modules/crm/leads.ts')).not.toContain('types.ts');
    expect(importGraph(join(ROOT, 'src'), { typeImports: true }).edges.get('modules/crm/leads.ts')).toContain('types.ts');
    expect(dynamic).toContainEqual(['main.ts', 'app.ts']);
  });
});

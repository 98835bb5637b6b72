import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

// The service's processes without tsx's loader hooks: src/ compiled file by file with the esbuild (and settings)
// tsx itself uses, so the code is what `node --import tsx src/…` runs, but a start takes seconds less (the hooks
// see every module the service loads, and the password-hashing child pays that again). test/e2e/harness.ts does
// the same for the browser tests.

export const ROOT = fileURLToPath(new URL('..', import.meta.url));
const CACHE = join(ROOT, 'node_modules', '.cache', 'pms-test-service');

/** The compiled tree of the current sources, keyed by their hash: compiled once, reused while they stay the same. */
async function compileSources(): Promise<string> {
  const src = join(ROOT, 'src');
  const esbuild = createRequire(createRequire(import.meta.url).resolve('tsx/package.json'))('esbuild') as typeof import('esbuild');
  const files = (readdirSync(src, { recursive: true }) as string[]).filter((name) => name.endsWith('.ts') && !name.endsWith('.d.ts')).sort();
  const hash = createHash('sha256').update(`${esbuild.version} ${process.version}\0`);
  for (const name of files) hash.update(name).update('\0').update(readFileSync(join(src, name))).update('\0');
  const dir = join(CACHE, hash.digest('hex').slice(0, 16));
  if (existsSync(join(dir, 'src'))) return dir;

  // Written beside and renamed into place: another worker may compile the same sources at the same moment.
  const building = `${dir}.${process.pid}-${Date.now()}`;
  mkdirSync(building, { recursive: true });
  try {
    await esbuild.build({
      entryPoints: files.map((name) => join(src, name)),
      outdir: join(building, 'src'),
      outbase: src,
      bundle: false,
      platform: 'node',
      format: 'esm',
      target: `node${process.versions.node}`,
      keepNames: true,
      sourcemap: 'inline',
      logLevel: 'silent',
    });
    writeFileSync(join(building, 'package.json'), '{ "type": "module" }\n');
    // Where the sources find them (`../../drizzle` from src/db, `../../console/dist` from src/http).
    for (const name of ['drizzle', 'console']) symlinkSync(join(ROOT, name), join(building, name), 'junction');
    try {
      renameSync(building, dir);
    } catch (error) {
      if (!existsSync(join(dir, 'src'))) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  // Compilations of older sources go after a day.
  for (const name of readdirSync(CACHE)) {
    const path = join(CACHE, name);
    if (path !== dir && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
  }
  return dir;
}

let compiledTree: Promise<string> | undefined;

/**
 * `node` arguments that run a source file (`main.ts`, `cli/admin.ts`) compiled: the same code as
 * `['--import', 'tsx', 'src/<script>']`, started faster. Compiled once per test worker.
 */
export async function compiled(script: string): Promise<string[]> {
  compiledTree ??= compileSources();
  return ['--enable-source-maps', join(await compiledTree, 'src', script.replace(/\.ts$/, '.js'))];
}

#!/usr/bin/env node
// Builds the staff console into console/dist.
//
//   node console/scripts/build.mjs               build now; exit 1 when the build fails
//   --if-changed  build only when the sources changed since the last build (a hash of them is kept in
//                 dist/.source-hash)
//   --soft        never fail (say why and exit 0): `npm start` runs `--if-changed --soft`, because the API must start
//                 even when the console cannot be built
//
// Builds are serialised by a lock directory (two `npm start`s, or a test run, never write dist/ at once), and a new
// build is written beside dist/ and swapped in by renaming, so a running service never serves half a build.
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const CONSOLE = dirname(dirname(fileURLToPath(import.meta.url)));
const ROOT = dirname(CONSOLE);
const DIST = join(CONSOLE, 'dist');
const HASH_FILE = '.source-hash';
const LOCK = join(CONSOLE, '.build-lock');
const STALE_LOCK_MS = 5 * 60_000;
const ifChanged = process.argv.includes('--if-changed');
const soft = process.argv.includes('--soft');

const say = (message) => process.stderr.write(`console: ${message}\n`);

/** Every file that shapes the build: the console's sources and settings, and the installed versions (lock file). */
function sourceHash() {
  const hash = createHash('sha256');
  const files = [];
  const walk = (dir) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else files.push(path);
    }
  };
  walk(join(CONSOLE, 'src'));
  if (existsSync(join(CONSOLE, 'public'))) walk(join(CONSOLE, 'public'));
  for (const name of ['index.html', 'vite.config.ts', 'tsconfig.json', 'package.json', 'scripts/build.mjs']) files.push(join(CONSOLE, name));
  files.push(join(ROOT, 'package-lock.json'));
  for (const file of files.sort()) {
    if (!existsSync(file)) continue;
    hash.update(relative(ROOT, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

const builtHash = () => {
  try {
    return readFileSync(join(DIST, HASH_FILE), 'utf8').trim();
  } catch {
    return undefined;
  }
};

async function lock() {
  for (;;) {
    try {
      mkdirSync(LOCK);
      return () => rmSync(LOCK, { recursive: true, force: true });
    } catch (err) {
      if (err.code !== 'EEXIST') throw err;
      try {
        if (Date.now() - statSync(LOCK).mtimeMs > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
      } catch {
        // released meanwhile
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
}

/** Brotli and gzip copies of every text asset, served as they are to browsers that accept them (no work per request). */
function precompress(dir) {
  for (const name of readdirSync(dir)) {
    if (!/\.(js|css|svg|json|html)$/.test(name)) continue;
    const bytes = readFileSync(join(dir, name));
    writeFileSync(join(dir, `${name}.br`), brotliCompressSync(bytes, { params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: bytes.length } }));
    writeFileSync(join(dir, `${name}.gz`), gzipSync(bytes, { level: 9 }));
  }
}

async function build(hash) {
  let vite;
  try {
    vite = await import('vite');
  } catch {
    throw new Error('Vite is not installed (run `npm install` in the repository; `npm ci --omit=dev` leaves it out)');
  }
  const out = join(CONSOLE, `.dist-${process.pid}`);
  rmSync(out, { recursive: true, force: true });
  // Always React's production build. Vite takes `process.env.NODE_ENV` over the mode when it is set, and the test
  // runner (which builds the console for the browser tests) sets it to "test": the bundle was React's development
  // build (StrictMode's double renders and effects, dev-only checks; a slower, larger framework chunk), which
  // `npm start` then served as it was, its sources unchanged.
  process.env.NODE_ENV = 'production';
  try {
    await vite.build({ root: CONSOLE, configFile: join(CONSOLE, 'vite.config.ts'), mode: 'production', logLevel: 'warn', build: { outDir: out, emptyOutDir: true } });
    precompress(join(out, 'assets'));
    writeFileSync(join(out, HASH_FILE), `${hash}\n`);
    const old = join(CONSOLE, `.dist-old-${process.pid}`);
    if (existsSync(DIST)) renameSync(DIST, old);
    renameSync(out, DIST);
    rmSync(old, { recursive: true, force: true });
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

async function main() {
  let hash = sourceHash();
  if (ifChanged && builtHash() === hash) return;
  const release = await lock();
  try {
    // Another process may have built the same sources while this one waited for the lock.
    hash = sourceHash();
    if (ifChanged && builtHash() === hash) return;
    const started = Date.now();
    say(ifChanged ? 'sources changed since the last build: building…' : 'building…');
    await build(hash);
    say(`built in ${((Date.now() - started) / 1000).toFixed(1)} s (${relative(ROOT, DIST)})`);
  } finally {
    release();
  }
}

main().catch((err) => {
  say(`build failed: ${err?.message ?? err}`);
  if (soft) {
    say(existsSync(join(DIST, 'index.html')) ? 'serving the previous build' : 'the API starts without the console (/ answers 503)');
    process.exit(0);
  }
  process.exit(1);
});

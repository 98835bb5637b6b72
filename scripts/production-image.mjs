#!/usr/bin/env node
// The image as the Dockerfile and .dockerignore describe it, read for scripts/check-production.sh, which performs the
// Dockerfile's stages outside a container. Only the forms these two files use are understood; anything else fails
// loudly rather than being checked wrongly.
//
//   context              the files of the build context, NUL-separated (git's files, filtered by .dockerignore)
//   runs STAGE           the stage's RUN commands, NUL-separated (build-time mounts left out)
//   copies               what the runtime stage copies from the build stage: one path under the work directory a line
//   env                  the runtime stage's ENV, NAME=value a line
//   cmd                  the runtime stage's CMD, NUL-separated arguments
//   healthcheck          the runtime stage's HEALTHCHECK command, NUL-separated arguments
//   dev-only             development dependencies the production install must leave out, one a line
//   sign-in URL EMAIL PASSWORD
//                        signs in, reads one page of leads with the session cookie and the console's page; exit 0 when
//                        all answer as they should
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function fail(message) {
  process.stderr.write(`production-image: ${message}\n`);
  process.exit(1);
}

/** The Dockerfile's instructions, continuation lines joined and comments dropped, grouped by stage. */
function stages() {
  const lines = readFileSync(join(ROOT, 'Dockerfile'), 'utf8').split('\n');
  const instructions = [];
  let current = '';
  for (const line of lines) {
    if (!current && /^\s*(#|$)/.test(line)) continue;
    if (current && /^\s*#/.test(line)) continue; // a comment inside a continued instruction
    const continued = /\\\s*$/.test(line);
    current += (current ? ' ' : '') + (continued ? line.replace(/\\\s*$/, '') : line).trim();
    if (!continued) {
      instructions.push(current);
      current = '';
    }
  }
  const found = new Map();
  let stage;
  for (const text of instructions) {
    const [, keyword, rest] = /^(\S+)\s*(.*)$/.exec(text);
    const instruction = { keyword: keyword.toUpperCase(), rest };
    if (instruction.keyword === 'FROM') {
      const name = /\s+AS\s+(\S+)\s*$/i.exec(rest)?.[1];
      if (!name) fail(`every stage needs a name (FROM … AS name): ${text}`);
      stage = [];
      found.set(name, stage);
    } else if (stage) stage.push(instruction);
  }
  return found;
}

function stage(name) {
  const found = stages().get(name);
  if (!found) fail(`the Dockerfile has no stage named ${name}`);
  return found;
}

/** Leading `--name=value` flags of an instruction, and what follows them. */
function flags(rest) {
  const options = {};
  let remaining = rest;
  for (let m; (m = /^--([a-z-]+)(?:=(\S*))?\s+/.exec(remaining)); remaining = remaining.slice(m[0].length)) options[m[1]] = m[2] ?? true;
  return { options, remaining };
}

function execForm(text, what) {
  try {
    const parsed = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string') && parsed.length) return parsed;
  } catch {
    // reported below
  }
  return fail(`${what} must be in exec form (a JSON array of strings), got: ${text}`);
}

/** A .dockerignore pattern as a regular expression over slash-separated paths (Go's filepath.Match plus `**`). */
function patternRegex(pattern) {
  let source = '';
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === '*' && pattern[i + 1] === '*') {
      source += pattern[i + 2] === '/' ? '(?:.*/)?' : '.*';
      i += pattern[i + 2] === '/' ? 2 : 1;
    } else if (c === '*') source += '[^/]*';
    else if (c === '?') source += '[^/]';
    else if ('[]\\'.includes(c)) fail(`.dockerignore: character classes and escapes are not understood here: ${pattern}`);
    else source += c.replace(/[.+^${}()|]/g, '\\$&');
  }
  return new RegExp(`^${source}$`);
}

/** The build context: every file git knows (committed or new, not ignored) that .dockerignore lets through. */
function context() {
  const rules = readFileSync(join(ROOT, '.dockerignore'), 'utf8')
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('#'))
    .map((line) => {
      const negated = line.startsWith('!');
      const pattern = posix.normalize((negated ? line.slice(1) : line).replace(/^\/+/, ''));
      return { negated, regex: patternRegex(pattern) };
    });
  const files = execFileSync('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
    .split('\0')
    .filter(Boolean);
  return files.filter((file) => {
    // As Docker does: the last rule matching the path, or one of the directories it is in, decides.
    const parts = file.split('/');
    const prefixes = parts.map((_, i) => parts.slice(0, i + 1).join('/'));
    let excluded = false;
    for (const rule of rules) if (prefixes.some((prefix) => rule.regex.test(prefix))) excluded = !rule.negated;
    return !excluded;
  });
}

/** Each path the runtime stage copies from the build stage, checked to land where it was (relative to WORKDIR). */
function copies() {
  const runtime = stage('runtime');
  const workdir = runtime.find((i) => i.keyword === 'WORKDIR')?.rest;
  if (!workdir) fail('the runtime stage needs a WORKDIR');
  const paths = [];
  for (const { keyword, rest } of runtime) {
    if (keyword === 'ADD') fail(`the runtime stage copies with COPY only: ADD ${rest}`);
    if (keyword !== 'COPY') continue;
    const { options, remaining } = flags(rest);
    if (options.from !== 'build') fail(`the runtime stage copies from the build stage only: COPY ${rest}`);
    const words = remaining.startsWith('[') ? execForm(remaining, 'COPY') : remaining.split(/\s+/);
    const destination = posix.resolve(workdir, words.at(-1));
    for (const source of words.slice(0, -1)) {
      const relative = posix.relative(workdir, source);
      if (relative.startsWith('..') || posix.isAbsolute(relative)) fail(`COPY takes ${source} from outside the build stage's ${workdir}`);
      // `COPY a b ./` puts each file in ./; `COPY dir ./dir` copies the directory's contents there.
      const landing = words.length > 2 || words.at(-1).endsWith('/') ? posix.join(destination, posix.basename(source)) : destination;
      if (landing !== posix.join(workdir, relative)) fail(`COPY puts ${source} at ${landing}, not at the same place under ${workdir}`);
      paths.push(relative);
    }
  }
  return paths;
}

function runs(name) {
  return stage(name)
    .filter((i) => i.keyword === 'RUN')
    .map(({ rest }) => flags(rest).remaining);
}

function env() {
  const values = [];
  for (const { keyword, rest } of stage('runtime')) {
    if (keyword !== 'ENV') continue;
    const pairs = rest.match(/[A-Za-z_][A-Za-z0-9_]*=("[^"]*"|\S*)/g);
    if (!pairs || pairs.join(' ') !== rest.replace(/\s+/g, ' ').trim()) fail(`ENV must be NAME=value pairs: ENV ${rest}`);
    for (const pair of pairs) values.push(pair.replace(/="(.*)"$/, '=$1'));
  }
  return values;
}

function cmd() {
  const found = stage('runtime').filter((i) => i.keyword === 'CMD');
  if (found.length !== 1) fail('the runtime stage needs one CMD');
  if (stage('runtime').some((i) => i.keyword === 'ENTRYPOINT')) fail('the runtime stage has an ENTRYPOINT: this check runs CMD alone');
  return execForm(found[0].rest, 'CMD');
}

function healthcheck() {
  const found = stage('runtime').filter((i) => i.keyword === 'HEALTHCHECK');
  if (found.length !== 1) fail('the runtime stage needs one HEALTHCHECK');
  const { remaining } = flags(found[0].rest);
  if (!remaining.startsWith('CMD ')) fail(`HEALTHCHECK must be followed by CMD: HEALTHCHECK ${found[0].rest}`);
  return execForm(remaining.slice(4).trim(), 'HEALTHCHECK CMD');
}

/** Development dependencies the lock file does not also need in production (a transitive one, such as yaml, stays). */
function devOnly() {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'));
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'));
  return Object.keys(manifest.devDependencies ?? {}).filter((name) => {
    const entry = lock.packages[`node_modules/${name}`];
    return entry && (entry.dev || entry.devOptional);
  });
}

async function signIn(base, email, password) {
  const expect = (condition, message) => condition || fail(message);
  const login = await fetch(`${base}/api/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(login.status === 200, `sign-in answered ${login.status}: ${await login.text()}`);
  const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ');
  expect(/session_token=/.test(cookie), `sign-in set no session cookie (set-cookie: ${login.headers.getSetCookie().join(' | ')})`);
  const leads = await fetch(`${base}/api/crm/leads?limit=5`, { headers: { cookie } });
  const body = await leads.text();
  expect(leads.status === 200 && Array.isArray(JSON.parse(body).data), `GET /api/crm/leads answered ${leads.status}: ${body.slice(0, 500)}`);
  const page = await fetch(`${base}/`, { headers: { accept: 'text/html' } });
  expect(page.status === 200 && (page.headers.get('content-type') ?? '').startsWith('text/html'), `GET / answered ${page.status}: the console is not served`);
  process.stdout.write('signed in; GET /api/crm/leads 200; GET / serves the console\n');
}

const [command, ...args] = process.argv.slice(2);
const nul = (items) => process.stdout.write(items.map((item) => `${item}\0`).join(''));
const lines = (items) => process.stdout.write(items.map((item) => `${item}\n`).join(''));
switch (command) {
  case 'context': nul(context()); break;
  case 'runs': nul(runs(args[0] ?? fail('runs needs a stage name'))); break;
  case 'copies': lines(copies()); break;
  case 'env': lines(env()); break;
  case 'cmd': nul(cmd()); break;
  case 'healthcheck': nul(healthcheck()); break;
  case 'dev-only': lines(devOnly()); break;
  case 'sign-in': await signIn(...args); break;
  default: fail(`unknown command ${command ?? '(none)'}; see the comment at the top of this file`);
}

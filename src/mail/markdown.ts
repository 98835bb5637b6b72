import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { serviceUnavailable } from '../errors.js';
import { nestingProblem, renderHtml } from './markdown-core.js';
import type { MarkdownReply, MarkdownRequest } from './markdown-worker.js';

export { MAX_MARKDOWN_NESTING } from './markdown-core.js';

/**
 * Content of this many characters or more is rendered and checked on the Markdown worker thread, so its cost (up to
 * ~0.5 s for 200,000 characters of unclosed `![` or `*a`) never holds up other requests; shorter content costs
 * less than the round trip and is done inline.
 */
export const INLINE_LIMIT = 20_000;

type Call = { resolve: (reply: { value: string | null; thread: number }) => void; reject: (err: Error) => void; done: Promise<unknown> };
type Running = { worker: Worker; calls: Map<number, Call> };

/**
 * The process's Node options the thread takes: source maps only. The rest are the process's own, and some break a
 * thread that inherits them (`--input-type`, say, of `node --input-type=module -e …`).
 */
const threadArgv = () => process.execArgv.filter((arg) => arg === '--enable-source-maps');

/**
 * A worker thread running a TypeScript file (tests, which run the sources): tsx's loader is registered in the thread
 * first, through its API (Node 20 does not apply `--import` in a worker's `execArgv`).
 */
function sourceWorker(entry: URL): Worker {
  const require = createRequire(import.meta.url);
  const manifest = pathToFileURL(require.resolve('tsx/package.json'));
  const api = new URL((require('tsx/package.json') as { exports: Record<string, { import: { default: string } }> }).exports['./esm/api']!.import.default, manifest);
  return new Worker(`import(${JSON.stringify(api.href)}).then(({ register }) => { register(); return import(${JSON.stringify(entry.href)}); });`, { eval: true, execArgv: threadArgv() });
}

/**
 * The one Markdown worker thread: started on first need, unref'ed while it has no work (it never keeps the process
 * alive), started again after it died. A crash or an error rejects the calls it had with a 503, so no caller waits
 * for ever. Exported for tests (`running.worker` is the thread).
 */
export const markdownThread = {
  running: null as Running | null,
  nextId: 0,

  call(op: MarkdownRequest['op'], content: string): Promise<{ value: string | null; thread: number }> {
    const run = this.running ?? this.start();
    const id = ++this.nextId;
    let call!: Call;
    const done = new Promise<{ value: string | null; thread: number }>((resolve, reject) => void (call = { resolve, reject, done: Promise.resolve() }));
    call.done = done.catch(() => undefined);
    run.calls.set(id, call);
    if (run.calls.size === 1) run.worker.ref();
    run.worker.postMessage({ id, op, content } satisfies MarkdownRequest);
    return done;
  },

  start(): Running {
    // The built service runs dist/mail/markdown-worker.js; tests run the TypeScript sources, which tsx loads.
    const worker = import.meta.url.endsWith('.ts') ? sourceWorker(new URL('./markdown-worker.ts', import.meta.url)) : new Worker(new URL('./markdown-worker.js', import.meta.url), { execArgv: threadArgv() });
    worker.unref();
    const run: Running = { worker, calls: new Map() };
    worker.on('message', (reply: MarkdownReply) => {
      const call = run.calls.get(reply.id);
      if (!call) return;
      run.calls.delete(reply.id);
      if (!run.calls.size) worker.unref();
      if ('error' in reply) call.reject(serviceUnavailable(`The content could not be rendered (${reply.error}); try again`));
      else call.resolve({ value: reply.value, thread: reply.thread });
    });
    worker.on('error', (err) => this.fail(run, err.message));
    worker.on('exit', (code) => this.fail(run, `the renderer stopped with code ${code}`));
    this.running = run;
    return run;
  },

  fail(run: Running, why: string) {
    if (this.running === run) this.running = null;
    for (const call of run.calls.values()) call.reject(serviceUnavailable(`The content could not be rendered (${why}); try again`));
    run.calls.clear();
    void run.worker.terminate();
  },

  /** Lets the work under way finish, then ends the thread (a later call starts another). */
  async stop() {
    const run = this.running;
    if (!run) return;
    this.running = null;
    await Promise.all([...run.calls.values()].map((call) => call.done));
    await run.worker.terminate();
  },
};

/** Ends the Markdown worker thread if it was started (the app's close). */
export const stopMarkdownWorker = () => markdownThread.stop();

/** Rendered HTML kept by the content's hash: at most this many characters of HTML in all. */
const CACHE_BUDGET = 16 * 1024 * 1024;
const rendered = new Map<string, string>();
let cachedChars = 0;
/** Renderings under way on the worker thread, by content hash: readers of the same new content share one. */
const underway = new Map<string, Promise<string>>();

/**
 * The one place Markdown is rendered: called only when the cache below has no answer for the content. An object, so
 * tests can count renders (`vi.spyOn(markdownRendering, 'render')`, this thread; `renderAway`, the worker thread)
 * and start from an empty cache (`forget`).
 */
export const markdownRendering = {
  /** On this thread: content shorter than `INLINE_LIMIT`. */
  render(content: string): string {
    return renderHtml(content);
  },
  /** On the Markdown worker thread; answers the HTML and the id of the thread that rendered it. */
  async renderAway(content: string): Promise<{ html: string; thread: number }> {
    const { value, thread } = await markdownThread.call('render', content);
    return { html: value ?? '', thread };
  },
  forget() {
    rendered.clear();
    cachedChars = 0;
  },
};

/** The cache key of `content`: its hash, so an edited record (or the same text elsewhere) is never served stale. */
const keyOf = (content: string) => createHash('sha256').update(content).digest('base64url');

function keep(key: string, html: string) {
  if (html.length > CACHE_BUDGET / 4) return;
  rendered.set(key, html);
  cachedChars += html.length;
  for (const [oldest, value] of rendered) {
    if (cachedChars <= CACHE_BUDGET) break;
    rendered.delete(oldest);
    cachedChars -= value.length;
  }
}

/**
 * Markdown → sanitised HTML, safe to put in an e-mail or a page. Rendered once per distinct content: a published
 * article read again, or a campaign's content checked then sent, reuses the first rendering (least recently used
 * entries go first once the cache holds `CACHE_BUDGET` characters). Large content is rendered on the worker thread;
 * if that thread fails, the promise rejects with a 503.
 */
export async function renderMarkdown(content: string): Promise<string> {
  const key = keyOf(content);
  const hit = rendered.get(key);
  if (hit !== undefined) {
    rendered.delete(key);
    rendered.set(key, hit);
    return hit;
  }
  if (content.length < INLINE_LIMIT) {
    const html = markdownRendering.render(content);
    keep(key, html);
    return html;
  }
  let work = underway.get(key);
  if (!work) {
    work = markdownRendering.renderAway(content).then(({ html }) => (keep(key, html), html)).finally(() => underway.delete(key));
    underway.set(key, work);
  }
  return work;
}

/** Answers of `markdownProblem` by content hash (a campaign's content is checked on create, on send and on delivery). */
const problems = new Map<string, string | null>();
const PROBLEMS_KEPT = 1000;

/** Why `content` cannot be rendered as a whole, or null when it can (large content: checked on the worker thread). */
export async function markdownProblem(content: string): Promise<string | null> {
  const key = keyOf(content);
  if (problems.has(key)) return problems.get(key)!;
  const problem = content.length < INLINE_LIMIT ? nestingProblem(content) : (await markdownThread.call('problem', content)).value;
  if (problems.size >= PROBLEMS_KEPT) problems.delete(problems.keys().next().value!);
  problems.set(key, problem);
  return problem;
}

import { createHash } from 'node:crypto';
import type { Token } from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { boundedMarkdown } from './markdown-engine.js';

/** The renderer every e-mail and page uses (and the console's preview): see markdown-engine.ts. */
const markdown = boundedMarkdown();

/** Deeper structure than this is refused (CONTRACT §13); markdown-it would silently stop rendering at `maxNesting`. */
export const MAX_MARKDOWN_NESTING = 50;

const SANITIZE: sanitizeHtml.IOptions = { allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2'], allowedSchemes: ['http', 'https', 'mailto'] };

/** Rendered HTML kept by the content's hash: at most this many characters of HTML in all. */
const CACHE_BUDGET = 16 * 1024 * 1024;
const rendered = new Map<string, string>();
let cachedChars = 0;

/**
 * The one place Markdown is rendered: called only when the cache below has no answer for the content. An object, so
 * tests can count renders (`vi.spyOn(markdownRendering, 'render')`) and start from an empty cache (`forget`).
 */
export const markdownRendering = {
  render(content: string): string {
    return sanitizeHtml(markdown.render(content), SANITIZE);
  },
  forget() {
    rendered.clear();
    cachedChars = 0;
  },
};

/** The cache key of `content`: its hash, so an edited record (or the same text elsewhere) is never served stale. */
const keyOf = (content: string) => createHash('sha256').update(content).digest('base64url');

/**
 * Markdown → sanitised HTML, safe to put in an e-mail or a page. Rendered once per distinct content: a published
 * article read again, or a campaign's content checked then sent, reuses the first rendering (least recently used
 * entries go first once the cache holds `CACHE_BUDGET` characters).
 */
export function renderMarkdown(content: string): string {
  const key = keyOf(content);
  const hit = rendered.get(key);
  if (hit !== undefined) {
    rendered.delete(key);
    rendered.set(key, hit);
    return hit;
  }
  const html = markdownRendering.render(content);
  if (html.length <= CACHE_BUDGET / 4) {
    rendered.set(key, html);
    cachedChars += html.length;
    for (const [oldest, value] of rendered) {
      if (cachedChars <= CACHE_BUDGET) break;
      rendered.delete(oldest);
      cachedChars -= value.length;
    }
  }
  return html;
}

/** The deepest nesting level of a token tree (block and inline), without recursion. */
function deepest(tokens: Token[]): number {
  let max = 0;
  const pending = [tokens];
  for (let list = pending.pop(); list; list = pending.pop()) {
    for (const token of list) {
      if (token.level > max) max = token.level;
      if (token.children) pending.push(token.children);
    }
  }
  return max;
}

/** Answers of `markdownProblem` by content hash (a campaign's content is checked on create, on send and on delivery). */
const problems = new Map<string, string | null>();
const PROBLEMS_KEPT = 1000;

/** Why `content` cannot be rendered as a whole, or null when it can. */
export function markdownProblem(content: string): string | null {
  const key = keyOf(content);
  if (problems.has(key)) return problems.get(key)!;
  const problem = findProblem(content);
  if (problems.size >= PROBLEMS_KEPT) problems.delete(problems.keys().next().value!);
  problems.set(key, problem);
  return problem;
}

function findProblem(content: string): string | null {
  try {
    if (deepest(markdown.parse(content, {})) > MAX_MARKDOWN_NESTING) return `is nested more than ${MAX_MARKDOWN_NESTING} levels deep (quotes, lists or emphasis), which cannot be rendered`;
    return null;
  } catch (err) {
    return `cannot be rendered as Markdown (${err instanceof Error ? err.message : String(err)})`;
  }
}

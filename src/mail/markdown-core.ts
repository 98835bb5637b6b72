import type { Token } from 'markdown-it';
import sanitizeHtml from 'sanitize-html';
import { boundedMarkdown } from './markdown-engine.js';

/*
 * The Markdown work itself, without caching or threads: run on the main thread for small content and on the
 * Markdown worker thread (markdown-worker.ts) for large content, so both answer alike.
 */

/** The renderer every e-mail and page uses (and the console's preview): see markdown-engine.ts. */
const markdown = boundedMarkdown();

/** Deeper structure than this is refused (CONTRACT §13); markdown-it would silently stop rendering at `maxNesting`. */
export const MAX_MARKDOWN_NESTING = 50;

const SANITIZE: sanitizeHtml.IOptions = { allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2'], allowedSchemes: ['http', 'https', 'mailto'] };

/** Markdown → sanitised HTML. */
export const renderHtml = (content: string): string => sanitizeHtml(markdown.render(content), SANITIZE);

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

/** Why `content` cannot be rendered as a whole, or null when it can. */
export function nestingProblem(content: string): string | null {
  try {
    if (deepest(markdown.parse(content, {})) > MAX_MARKDOWN_NESTING) return `is nested more than ${MAX_MARKDOWN_NESTING} levels deep (quotes, lists or emphasis), which cannot be rendered`;
    return null;
  } catch (err) {
    return `cannot be rendered as Markdown (${err instanceof Error ? err.message : String(err)})`;
  }
}

import markdownIt from 'markdown-it';
import type { Token } from 'markdown-it';
import sanitizeHtml from 'sanitize-html';

/**
 * markdown-it: time linear in the input whatever it holds (marked is quadratic on runs of `_a`), and its nesting is
 * bounded (`maxNesting`), so no content can exhaust the stack. Raw HTML passes through to the sanitiser, as before.
 */
const markdown = markdownIt({ html: true, linkify: false, maxNesting: 100 });

/** Deeper structure than this is refused (CONTRACT §13); markdown-it would silently stop rendering at `maxNesting`. */
export const MAX_MARKDOWN_NESTING = 50;

/** Markdown → sanitised HTML, safe to put in an e-mail. */
export function renderMarkdown(content: string): string {
  const html = markdown.render(content);
  return sanitizeHtml(html, { allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2'], allowedSchemes: ['http', 'https', 'mailto'] });
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

/** Why `content` cannot be rendered as a whole, or null when it can. */
export function markdownProblem(content: string): string | null {
  try {
    if (deepest(markdown.parse(content, {})) > MAX_MARKDOWN_NESTING) return `is nested more than ${MAX_MARKDOWN_NESTING} levels deep (quotes, lists or emphasis), which cannot be rendered`;
    return null;
  } catch (err) {
    return `cannot be rendered as Markdown (${err instanceof Error ? err.message : String(err)})`;
  }
}

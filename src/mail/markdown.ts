import { marked } from 'marked';
import sanitizeHtml from 'sanitize-html';

/** Markdown → sanitised HTML, safe to put in an e-mail. */
export function renderMarkdown(markdown: string): string {
  const html = marked.parse(markdown, { async: false }) as string;
  return sanitizeHtml(html, { allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'h1', 'h2'], allowedSchemes: ['http', 'https', 'mailto'] });
}

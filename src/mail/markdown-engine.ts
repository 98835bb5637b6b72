import markdownIt from 'markdown-it';

/*
 * The Markdown renderer's settings, shared by the service (src/mail/markdown.ts) and the console's preview, so the
 * preview shows what the e-mail or page will hold. Depends on markdown-it alone.
 */

/**
 * Inline nesting (emphasis, links inside link text) is bounded more tightly than block nesting: an unclosed `[` or
 * `![` makes markdown-it's link rule look for its label through every nested `[` down to `maxNesting` levels, so a
 * run of them costs characters × maxNesting (200,000 characters of `![`: ~0.65 s at 100 levels, ~0.15 s at 20,
 * CommonMark's own preset value). Deeper inline nesting than this stays text.
 */
const INLINE_NESTING = 20;

/**
 * markdown-it: time linear in the input whatever it holds (marked is quadratic on runs of `_a`), and its nesting is
 * bounded (`maxNesting`), so no content can exhaust the stack. Raw HTML passes through to the sanitiser.
 */
export function boundedMarkdown() {
  const markdown = markdownIt({ html: true, linkify: false, maxNesting: 100 });
  const parseInline = markdown.inline.parse.bind(markdown.inline);
  markdown.inline.parse = (src, md, env, tokens) => {
    const blockNesting = md.options.maxNesting;
    md.options.maxNesting = INLINE_NESTING;
    try {
      parseInline(src, md, env, tokens);
    } finally {
      md.options.maxNesting = blockNesting;
    }
  };
  return markdown;
}

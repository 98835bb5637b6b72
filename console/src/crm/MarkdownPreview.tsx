import { Box } from '@mui/material';
import DOMPurify from 'dompurify';
import markdownIt from 'markdown-it';
import { useMemo } from 'react';

/** The server's renderer and settings (src/mail/markdown.ts): the preview shows what the e-mail will hold. */
const markdown = markdownIt({ html: true, linkify: false, maxNesting: 100 });

/** Markdown as the campaign e-mail renders it (markdown-it, then sanitised), for the editor's preview. */
export function MarkdownPreview({ markdown: source, label = 'Preview' }: { markdown: string; label?: string }) {
  const html = useMemo(() => DOMPurify.sanitize(markdown.render(source ?? '')), [source]);
  return (
    <Box component="section" aria-label={label} sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 2, minHeight: 120, overflowWrap: 'anywhere', '& img': { maxWidth: '100%' } }}>
      {source ? <div dangerouslySetInnerHTML={{ __html: html }} /> : <Box component="p" sx={{ color: 'text.secondary', m: 0 }}>Nothing to preview yet.</Box>}
    </Box>
  );
}

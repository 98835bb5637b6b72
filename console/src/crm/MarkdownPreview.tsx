import { Box } from '@mui/material';
import DOMPurify from 'dompurify';
import { useMemo } from 'react';
import { boundedMarkdown } from '../../../src/mail/markdown-engine.js';

/** The server's renderer and settings: the preview shows what the e-mail will hold. */
const markdown = boundedMarkdown();

/** Markdown as the campaign e-mail renders it (markdown-it, then sanitised), for the editor's preview. */
export function MarkdownPreview({ markdown: source, label = 'Preview' }: { markdown: string; label?: string }) {
  const html = useMemo(() => DOMPurify.sanitize(markdown.render(source ?? '')), [source]);
  return (
    <Box component="section" aria-label={label} sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 2, minHeight: 120, overflowWrap: 'anywhere', '& img': { maxWidth: '100%' } }}>
      {source ? <div dangerouslySetInnerHTML={{ __html: html }} /> : <Box component="p" sx={{ color: 'text.secondary', m: 0 }}>Nothing to preview yet.</Box>}
    </Box>
  );
}

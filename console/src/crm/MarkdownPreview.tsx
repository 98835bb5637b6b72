import { Box } from '@mui/material';
import DOMPurify from 'dompurify';
import { marked } from 'marked';
import { useMemo } from 'react';

/** Markdown as the campaign e-mail renders it (marked, then sanitised), for the editor's preview. */
export function MarkdownPreview({ markdown, label = 'Preview' }: { markdown: string; label?: string }) {
  const html = useMemo(() => DOMPurify.sanitize(marked.parse(markdown ?? '', { async: false }) as string), [markdown]);
  return (
    <Box component="section" aria-label={label} sx={{ border: 1, borderColor: 'divider', borderRadius: 1, p: 2, minHeight: 120, overflowWrap: 'anywhere', '& img': { maxWidth: '100%' } }}>
      {markdown ? <div dangerouslySetInnerHTML={{ __html: html }} /> : <Box component="p" sx={{ color: 'text.secondary', m: 0 }}>Nothing to preview yet.</Box>}
    </Box>
  );
}

import type { FastifyRequest } from 'fastify';
import { escapeHtml } from '../../mail/templates.js';

/** A small page for a person who opened an e-mailed link in a browser (the link lives in their mailbox, not in the console). */
export const page = (title: string, text: string) => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>${escapeHtml(title)}</title></head>
<body style="font-family:system-ui,-apple-system,Segoe UI,Arial,sans-serif;max-width:32rem;margin:4rem auto;padding:0 1rem;line-height:1.5;color:#222">
<main><h1 style="font-size:1.5rem">${escapeHtml(title)}</h1><p>${escapeHtml(text)}</p></main></body></html>
`;

/** Browsers ask for HTML (and not JSON); API clients and mailbox providers get the contract's JSON. */
export const wantsHtml = (request: FastifyRequest) => {
  const accept = String(request.headers.accept ?? '');
  return accept.includes('text/html') && !accept.includes('application/json');
};

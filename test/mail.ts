// The mail a test service wrote: its outbox read as messages (RFC 822 / MIME, enough for nodemailer's output).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { eventually, type TestContext } from './helpers.js';

const BASE_URL = 'http://localhost:3000';
const LINK = /http:\/\/localhost:3000\/reset-password\?token=([^\s"'<>&]+)/;

// ---------------------------------------------------------------------------------------------
// A small RFC 822 / MIME reader: enough for nodemailer's output (multipart, quoted-printable, base64).

function splitMessage(raw: string): { headers: Record<string, string>; body: string } {
  const at = raw.search(/\r?\n\r?\n/);
  const head = at < 0 ? raw : raw.slice(0, at);
  const body = at < 0 ? '' : raw.slice(at).replace(/^\r?\n\r?\n/, '');
  const headers: Record<string, string> = {};
  for (const line of head.replace(/\r?\n[ \t]+/g, ' ').split(/\r?\n/)) {
    const colon = line.indexOf(':');
    if (colon > 0) headers[line.slice(0, colon).trim().toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { headers, body };
}

function decodeQuotedPrintable(text: string): string {
  const soft = text.replace(/=\r?\n/g, '');
  const bytes: number[] = [];
  for (let i = 0; i < soft.length; i++) {
    if (soft[i] === '=' && /^[0-9A-Fa-f]{2}$/.test(soft.slice(i + 1, i + 3))) {
      bytes.push(parseInt(soft.slice(i + 1, i + 3), 16));
      i += 2;
    } else {
      bytes.push(...Buffer.from(soft[i], 'utf8'));
    }
  }
  return Buffer.from(bytes).toString('utf8');
}

/** The decoded text of every leaf part of a message, by content type. */
function mimeParts(raw: string): { type: string; text: string }[] {
  const { headers, body } = splitMessage(raw);
  const type = (headers['content-type'] ?? 'text/plain').toLowerCase();
  const boundary = /boundary="?([^";]+)"?/i.exec(headers['content-type'] ?? '')?.[1];
  if (type.startsWith('multipart/') && boundary) {
    const sections = body.split(`--${boundary}`).slice(1);
    return sections.filter((s) => !s.startsWith('--')).flatMap((s) => mimeParts(s.replace(/^\r?\n/, '')));
  }
  const encoding = (headers['content-transfer-encoding'] ?? '7bit').toLowerCase();
  const text =
    encoding === 'quoted-printable' ? decodeQuotedPrintable(body)
    : encoding === 'base64' ? Buffer.from(body.replace(/\s+/g, ''), 'base64').toString('utf8')
    : body;
  return [{ type: type.split(';')[0].trim(), text }];
}

export type Mail = { to: string; subject: string; text: string; html: string; raw: string };

export function parseMail(raw: string): Mail {
  const { headers } = splitMessage(raw);
  const parts = mimeParts(raw);
  return {
    to: headers.to ?? '',
    subject: headers.subject ?? '',
    text: parts.filter((p) => p.type === 'text/plain').map((p) => p.text).join('\n'),
    html: parts.filter((p) => p.type === 'text/html').map((p) => p.text).join('\n'),
    raw,
  };
}

/** The reset token of a mail: the link in the text part, and the same link in the HTML part. */
export function resetTokenOf(mail: Mail): string {
  const inText = LINK.exec(mail.text);
  expect(inText, `a ${BASE_URL}/reset-password?token=… link in the text part`).not.toBeNull();
  const inHtml = LINK.exec(mail.html);
  expect(inHtml?.[1]).toBe(inText![1]);
  return decodeURIComponent(inText![1]);
}

/** Mails in the outbox, read once each (`seen` remembers the files already taken). */
export function outboxReader(ctx: TestContext) {
  const dir = join(ctx.config.dataDir, 'outbox');
  const seen = new Set<string>();
  const all = () => (existsSync(dir) ? readdirSync(dir).filter((f) => f.endsWith('.eml')).sort() : []);
  return {
    dir,
    /** Every unread mail addressed to `to` (lower-case compare). */
    unread(to: string): Mail[] {
      return all()
        .filter((f) => !seen.has(f))
        .map((f) => ({ f, mail: parseMail(readFileSync(join(dir, f), 'utf8')) }))
        .filter(({ mail }) => mail.to.toLowerCase().includes(to.toLowerCase()))
        .map(({ f, mail }) => (seen.add(f), mail));
    },
    async next(to: string): Promise<Mail> {
      return eventually(() => this.unread(to)[0], `a mail to ${to} in the outbox`);
    },
  };
}


const CONFIRM_LINK = /http:\/\/localhost:3000\/api\/public\/newsletter\/confirm\?token=([A-Za-z0-9_-]+)/;

/** The confirmation link of a newsletter sign-up mail (the text part's, the same as the HTML part's), as a path. */
export function confirmPathOf(mail: Mail): string {
  const inText = CONFIRM_LINK.exec(mail.text);
  expect(inText, `a ${BASE_URL}/api/public/newsletter/confirm?token=… link in the text part`).not.toBeNull();
  expect(CONFIRM_LINK.exec(mail.html)?.[1]).toBe(inText![1]);
  return inText![0].slice(BASE_URL.length);
}

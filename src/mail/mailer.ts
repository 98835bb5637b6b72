import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import nodemailer, { type Transporter } from 'nodemailer';
import { v7 as uuidv7 } from 'uuid';
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from '../config.js';

export type Mail = {
  to: string;
  subject: string;
  html: string;
  text: string;
  headers?: Record<string, string>;
  /** Stable Message-ID, so a receiver can recognise a retried message. */
  messageId?: string;
};

export type Mailer = {
  send(mail: Mail): Promise<void>;
  close(): void;
};

/**
 * SMTP through any provider when SMTP_URL is set; otherwise every message becomes an RFC 822 `.eml` file in
 * DATA_DIR/outbox with a one-line log summary (never the body: it may hold a reset link).
 */
export function createMailer(config: Config, log: FastifyBaseLogger): Mailer {
  if (config.smtpUrl) {
    const transport: Transporter = nodemailer.createTransport(config.smtpUrl, { from: config.mailFrom });
    return {
      async send(mail) {
        await transport.sendMail({ from: config.mailFrom, ...mail });
      },
      close: () => transport.close(),
    };
  }

  const outbox = join(config.dataDir, 'outbox');
  mkdirSync(outbox, { recursive: true });
  const transport = nodemailer.createTransport({ streamTransport: true, buffer: true, newline: 'unix' });
  return {
    async send(mail) {
      const info = await transport.sendMail({ from: config.mailFrom, ...mail });
      const file = join(outbox, `${uuidv7()}.eml`);
      writeFileSync(file, info.message as Buffer);
      log.info({ to: mail.to, subject: mail.subject, file }, 'mail written to outbox');
    },
    close: () => transport.close(),
  };
}

/**
 * The same mailer, telling `counts` of every message sent and every attempt that failed (the metrics' mail counters):
 * every part of the service sends through `app.mailer` or the jobs' `mailer`, so this one wrapper sees them all.
 */
export function countingMailer(mailer: Mailer, counts: { sent(): void; failed(): void }): Mailer {
  return {
    async send(mail) {
      try {
        await mailer.send(mail);
      } catch (err) {
        counts.failed();
        throw err;
      }
      counts.sent();
    },
    close: () => mailer.close(),
  };
}

import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Type } from '@sinclair/typebox';
import type { FastifyRequest } from 'fastify';
import { clock } from '../../clock.js';
import type { Config } from '../../config.js';
import { usedFormTokens } from '../../db/schema/index.js';
import { serviceUnavailable } from '../../errors.js';
import type { App } from '../../types.js';

/**
 * Keeping bots out of the public forms: a honeypot field, a signed form token (old enough, not expired, used once) and,
 * when configured, a CAPTCHA. A submission that fails gets the very answer a person gets, and nothing is kept or sent.
 */

/** How long a form token stays valid after it was issued. */
export const FORM_TOKEN_TTL_MS = 2 * 60 * 60 * 1000;
/** How long the CAPTCHA provider may take to answer before the form is refused with 503. */
const CAPTCHA_TIMEOUT_MS = 5_000;

export type PublicForm = 'inquiry' | 'newsletter';
export type DropReason = 'honeypot' | 'token_missing' | 'token_invalid' | 'token_young' | 'token_expired' | 'token_reused' | 'captcha_missing' | 'captcha_failed';

const EXAMPLE_TOKEN = 'mi3x9k2a.q7Vb0dW3hK9sLm2pX4tZ1g.9fJ2kLmN0pQ4rS6tU8vW0xY2zA4bC6dE8fG0hI2jK4l';

/** The fields both public forms take besides their own. */
export const GuardFields = {
  form_token: Type.Optional(Type.String({ maxLength: 500, description: 'From `GET /api/public/form-token`, fetched when the form is shown; one per submission', examples: [EXAMPLE_TOKEN] })),
  website: Type.Optional(Type.String({ maxLength: 10_000, description: 'Honeypot: a field hidden from people, left empty. Anything in it marks the submission as a bot\'s', examples: [''] })),
  captcha_token: Type.Optional(Type.String({ maxLength: 16_384, description: 'The CAPTCHA widget\'s response, when the service checks a CAPTCHA (CAPTCHA_PROVIDER)', examples: ['0.ZpY4cW…'] })),
  'cf-turnstile-response': Type.Optional(Type.String({ maxLength: 16_384, description: 'The same, under the name Cloudflare Turnstile\'s widget gives its hidden field' })),
  'h-captcha-response': Type.Optional(Type.String({ maxLength: 16_384, description: 'The same, under the name hCaptcha\'s widget gives its hidden field' })),
};

export type GuardBody = { form_token?: string; website?: string; captcha_token?: string; 'cf-turnstile-response'?: string; 'h-captcha-response'?: string };

/** The fields of a public form's body that are the guard's, not the record's. */
export function withoutGuardFields<T extends GuardBody>(body: T): Omit<T, keyof GuardBody> {
  const { form_token: _t, website: _w, captcha_token: _c, 'cf-turnstile-response': _cf, 'h-captcha-response': _h, ...rest } = body;
  return rest;
}

const mac = (secret: string, payload: string) => createHmac('sha256', `form-token:${secret}`).update(payload).digest('base64url');

/** A new form token: `issued (ms, base 36).random id.HMAC-SHA256(AUTH_SECRET, both)`. */
export function issueFormToken(config: Pick<Config, 'authSecret' | 'formTokenMinSeconds'>, now = clock.now()) {
  const payload = `${now.getTime().toString(36)}.${randomBytes(16).toString('base64url')}`;
  return {
    token: `${payload}.${mac(config.authSecret, payload)}`,
    not_before: new Date(now.getTime() + config.formTokenMinSeconds * 1000).toISOString(),
    expires_at: new Date(now.getTime() + FORM_TOKEN_TTL_MS).toISOString(),
  };
}

type Checked = { ok: true; id: string; expiresAt: Date } | { ok: false; reason: DropReason };

/** Whether `token` is one this service issued, old enough and not expired (its use is checked apart). */
export function checkFormToken(config: Pick<Config, 'authSecret' | 'formTokenMinSeconds'>, token: string, now = clock.now()): Checked {
  const [issued, id, signature, extra] = token.split('.');
  if (!issued || !id || !signature || extra !== undefined) return { ok: false, reason: 'token_invalid' };
  const expected = Buffer.from(mac(config.authSecret, `${issued}.${id}`));
  const given = Buffer.from(signature);
  if (expected.length !== given.length || !timingSafeEqual(expected, given)) return { ok: false, reason: 'token_invalid' };
  const at = parseInt(issued, 36);
  if (!Number.isSafeInteger(at)) return { ok: false, reason: 'token_invalid' };
  if (now.getTime() < at + config.formTokenMinSeconds * 1000) return { ok: false, reason: 'token_young' };
  if (now.getTime() >= at + FORM_TOKEN_TTL_MS) return { ok: false, reason: 'token_expired' };
  return { ok: true, id, expiresAt: new Date(at + FORM_TOKEN_TTL_MS) };
}

/**
 * Marks a token's id used; false when it already was. In Redis when REDIS_URL is set (as the rate limits), else (or
 * when Redis fails) in the database: either way shared by every instance. Ids are kept until their token expires
 * (Redis forgets them then; the `public-forms-cleanup` job removes them from the database).
 */
export async function useFormToken(app: App, id: string, expiresAt: Date): Promise<boolean> {
  const now = clock.now();
  if (app.redis) {
    try {
      const ttl = Math.max(1, expiresAt.getTime() - now.getTime());
      return (await app.redis.set(`pms-form-token:${id}`, '1', 'PX', ttl, 'NX')) === 'OK';
    } catch (err) {
      app.log.warn({ err: { message: (err as Error).message } }, 'form token store (Redis) unavailable: using the database');
    }
  }
  const { db } = app.database;
  const inserted = await db.insert(usedFormTokens).values({ id, expires_at: expiresAt }).onConflictDoNothing().returning({ id: usedFormTokens.id });
  return inserted.length === 1;
}

type CaptchaAnswer = 'passed' | 'failed' | 'unavailable';

/** Asks the provider's siteverify endpoint (form-encoded secret, response, remote IP) whether `response` is a person's. */
export async function verifyCaptcha(captcha: NonNullable<Config['captcha']>, response: string, ip: string | null): Promise<CaptchaAnswer> {
  const form = new URLSearchParams({ secret: captcha.secret, response });
  if (ip) form.set('remoteip', ip);
  try {
    const res = await fetch(captcha.verifyUrl, { method: 'POST', body: form, signal: AbortSignal.timeout(CAPTCHA_TIMEOUT_MS) });
    if (!res.ok) return 'unavailable';
    const answer = (await res.json()) as { success?: unknown; 'error-codes'?: unknown };
    if (answer.success === true) return 'passed';
    // The provider's own failure is not the visitor's.
    return Array.isArray(answer['error-codes']) && answer['error-codes'].includes('internal-error') ? 'unavailable' : 'failed';
  } catch {
    return 'unavailable';
  }
}

/**
 * Whether a public form's submission comes from a person. False: a bot's, already counted and logged; the caller
 * answers as usual and keeps nothing. Throws 503 when the CAPTCHA provider cannot be asked (nothing is kept, the token
 * is not used up, so the person can send the form again).
 */
export async function fromAPerson(app: App, request: FastifyRequest, form: PublicForm, body: GuardBody): Promise<boolean> {
  const drop = (reason: DropReason) => {
    app.metrics?.formDropped.inc({ form, reason });
    request.log.info({ form, reason }, 'public form submission dropped');
    return false;
  };
  const { config } = app;
  if (body.website) return drop('honeypot');

  let token: Extract<Checked, { ok: true }> | undefined;
  if (body.form_token) {
    const checked = checkFormToken(config, body.form_token);
    if (!checked.ok) return drop(checked.reason);
    token = checked;
  } else if (config.publicFormToken) {
    return drop('token_missing');
  }

  if (config.captcha) {
    const response = body.captcha_token || body['cf-turnstile-response'] || body['h-captcha-response'];
    if (!response) return drop('captcha_missing');
    const answer = await verifyCaptcha(config.captcha, response, request.ip ?? null);
    if (answer === 'unavailable') {
      request.log.warn({ form, provider: config.captcha.provider }, 'CAPTCHA provider unavailable: form refused with 503');
      throw serviceUnavailable('The form cannot be checked right now. Please send it again in a few minutes.');
    }
    if (answer === 'failed') return drop('captcha_failed');
  }

  // Last, so that a refusal above (503 included) leaves the token usable.
  if (token && !(await useFormToken(app, token.id, token.expiresAt))) return drop('token_reused');
  return true;
}

import { createHash, randomBytes } from 'node:crypto';
import { eq, lt } from 'drizzle-orm';
import { clock } from '../../clock.js';
import type { Config } from '../../config.js';
import type { Actor } from '../../data/actor.js';
import { audited } from '../../data/mutations.js';
import { newsletterSignups, newsletterSubscriptions } from '../../db/schema/index.js';
import { newsletterConfirmMail } from '../../mail/templates.js';
import type { App } from '../../types.js';
import { type Consent, subscribe, subscribeIn } from './newsletters.js';

/**
 * Confirmed (double opt-in) newsletter sign-ups: a public sign-up is kept apart from subscriptions until the link
 * e-mailed to the address is followed. The link's token is random (256 bits) and only its SHA-256 is stored, as for
 * password resets: a forged or reused one matches no row.
 */

/** How long a confirmation link works. */
export const CONFIRM_TTL_HOURS = 48;
/** One confirmation mail an hour at most per address, however often it is signed up. */
const RESEND_AFTER_MS = 60 * 60 * 1000;

const hashOf = (token: string) => createHash('sha256').update(token).digest('hex');

/** The link mailed: NEWSLETTER_CONFIRM_URL (the website's own page) or the service's page, with the token. */
export function confirmUrl(config: Pick<Config, 'baseUrl' | 'newsletterConfirmUrl'>, token: string): string {
  const url = new URL(config.newsletterConfirmUrl ?? `${config.baseUrl.replace(/\/$/, '')}/api/public/newsletter/confirm`);
  url.searchParams.set('token', token);
  return url.toString();
}

export type SignUp = { email: string; name: string | null; form: string | null; consentText: string };

/**
 * A visitor's sign-up. With confirmation on: nothing for an address already subscribed; otherwise the pending sign-up
 * is kept (or renewed, with a new link, once its last mail is an hour old) and the link mailed after the answer.
 * With confirmation off: subscribed at once. The caller answers the same whatever happened here.
 */
export async function signUp(app: App, actor: Actor, input: SignUp): Promise<void> {
  const email = input.email.trim().toLowerCase();
  const now = clock.now();
  const consent: Consent = { at: now, ip: actor.ip, user_agent: actor.userAgent, form: input.form, text: input.consentText, method: 'public-unconfirmed' };
  const { db } = app.database;
  if (!app.config.newsletterDoubleOptIn) {
    await subscribe(db, actor, email, input.name, { announce: true, consent });
    return;
  }
  const [current] = await db.select({ status: newsletterSubscriptions.status }).from(newsletterSubscriptions).where(eq(newsletterSubscriptions.email, email));
  if (current?.status === 'subscribed') return;

  const token = randomBytes(32).toString('base64url');
  const values = {
    name: input.name, token_hash: hashOf(token), mailed_at: now, expires_at: new Date(now.getTime() + CONFIRM_TTL_HOURS * 3600_000),
    consent_at: now, consent_ip: actor.ip, consent_user_agent: actor.userAgent, consent_form: input.form, consent_text: input.consentText,
  };
  // One statement decides whether a mail goes out: concurrent sign-ups of one address cannot both mail.
  const [kept] = await db.insert(newsletterSignups).values({ email, ...values })
    .onConflictDoUpdate({ target: newsletterSignups.email, set: values, setWhere: lt(newsletterSignups.mailed_at, new Date(now.getTime() - RESEND_AFTER_MS)) })
    .returning({ id: newsletterSignups.id });
  if (!kept) return;
  const mail = newsletterConfirmMail(confirmUrl(app.config, token), CONFIRM_TTL_HOURS);
  app.background.track(app.mailer.send({ to: email, ...mail }).catch((err: unknown) => {
    app.log.error({ err, signup: kept.id }, 'newsletter confirmation mail not sent');
  }));
}

/**
 * Follows a confirmation link: the pending sign-up it names is used up and the address subscribed on the consent
 * given on the form (`public-confirmed`), audited with the `newsletter.subscribed` event. The address, or null for a
 * link that is unknown (forged, already used, superseded) or expired: callers say the same for all of these.
 */
export async function confirmSignUp(app: App, actor: Actor, token: string): Promise<string | null> {
  const now = clock.now();
  return audited(app.database.db, actor, async (work) => {
    const [row] = await work.tx.delete(newsletterSignups).where(eq(newsletterSignups.token_hash, hashOf(token))).returning();
    if (!row || row.expires_at.getTime() <= now.getTime()) return null;
    const consent: Consent = { at: row.consent_at, ip: row.consent_ip, user_agent: row.consent_user_agent, form: row.consent_form, text: row.consent_text, method: 'public-confirmed' };
    await subscribeIn(work, row.email, row.name, { announce: true, consent });
    return row.email;
  });
}

import { Type } from '@sinclair/typebox';
import { clock } from '../../clock.js';
import { eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import type { Actor } from '../../data/actor.js';
import { anyOf } from '../../data/filters.js';
import { audited, type Work } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import type { Db } from '../../db/client.js';
import { CONSENT_METHODS, newsletterSubscriptions, SUBSCRIPTION_STATUSES } from '../../db/schema/index.js';
import { conflict } from '../../errors.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { Created, Email, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

const subscriptions = newsletterSubscriptions;

/** Newsletter subscriptions: who receives campaigns. Listed newest first, by status only (CONTRACT §8). */
export const newsletterResource = defineResource({
  name: 'newsletters',
  module: 'crm',
  label: 'Newsletter subscription',
  table: subscriptions,
  id: subscriptions.id,
  view: {
    fields: {
      id: subscriptions.id, email: subscriptions.email, name: subscriptions.name, status: subscriptions.status,
      subscribed_at: subscriptions.subscribed_at, unsubscribed_at: subscriptions.unsubscribed_at,
      consent: {
        at: subscriptions.consent_at, ip: subscriptions.consent_ip, user_agent: subscriptions.consent_user_agent,
        form: subscriptions.consent_form, text: subscriptions.consent_text, method: subscriptions.consent_method,
      },
    },
  },
  list: {
    sortable: { subscribed_at: subscriptions.subscribed_at },
    defaultSort: 'subscribed_at',
    sortParams: false,
    filters: { status: anyOf(subscriptions.status, StringEnum(SUBSCRIPTION_STATUSES)) },
    ranges: { subscribed: subscriptions.subscribed_at },
  },
  export: {},
});

type Status = (typeof SUBSCRIPTION_STATUSES)[number];

/** The consent behind a subscription: when, from which address and browser, on which form, to which wording, and how. */
export type Consent = { at: Date; ip: string | null; user_agent: string | null; form: string | null; text: string | null; method: (typeof CONSENT_METHODS)[number] };

/** A subscription's consent columns. */
export const consentColumns = (consent: Consent) => ({
  consent_at: consent.at, consent_ip: consent.ip, consent_user_agent: consent.user_agent,
  consent_form: consent.form, consent_text: consent.text, consent_method: consent.method,
});

/** Consent recorded by staff (the console, the API): the activity log says who. */
export const staffConsent = (method: 'staff' | 'import' = 'staff'): Consent => ({ at: clock.now(), ip: null, user_agent: null, form: null, text: null, method });

const ConsentRecord = Type.Object({
  at: Nullable(Timestamp({ description: 'When consent was given (a public sign-up: when the form was sent)' })),
  ip: Nullable(Type.String({ description: 'The address the form was sent from', examples: ['203.0.113.7'] })),
  user_agent: Nullable(Type.String({ description: 'The browser that sent the form', examples: ['Mozilla/5.0 (X11; Linux x86_64) Chrome/131.0'] })),
  form: Nullable(Type.String({ description: 'Which form of the website (its `form` field)', examples: ['footer'] })),
  text: Nullable(Type.String({ description: 'The consent wording the form showed', examples: ['Yes, send me the newsletter by e-mail.'] })),
  method: Nullable(StringEnum(CONSENT_METHODS, { description: 'public-confirmed: the e-mailed link was followed; public-unconfirmed: signed up with confirmation off; staff; import' })),
}, { additionalProperties: false, description: 'The consent behind the subscription; all null for subscriptions made before it was recorded' });

export const Subscription = Strict({
  id: Uuid(),
  email: Type.String(),
  name: Nullable(Type.String()),
  status: StringEnum(SUBSCRIPTION_STATUSES),
  subscribed_at: Timestamp(),
  unsubscribed_at: Nullable(Timestamp()),
  consent: ConsentRecord,
});

export const SubscribeInput = Strict({ email: Email(), name: Type.Optional(Nullable(RequiredText())) });
const SubscriptionPatch = PartialStrict(Strict({ status: StringEnum(SUBSCRIPTION_STATUSES), name: Nullable(RequiredText()) }));

/**
 * The one owner of a subscription's state: its status and the times that go with it. Subscribing again sets a new
 * `subscribed_at` and clears `unsubscribed_at`; unsubscribing sets it. Audited in the caller's transaction.
 */
export function changeSubscription(work: Work, id: string, change: { status?: Status; name?: string | null }, consent: Consent = staffConsent()) {
  return work.update(newsletterResource, id, (current) => {
    const values: Partial<typeof subscriptions.$inferSelect> = { ...change };
    if (change.status === 'unsubscribed' && current.status !== 'unsubscribed') values.unsubscribed_at = clock.now();
    // Subscribed again: on the consent given this time.
    if (change.status === 'subscribed' && current.status !== 'subscribed') Object.assign(values, { unsubscribed_at: null, subscribed_at: clock.now(), ...consentColumns(consent) });
    return values;
  });
}

export type SubscribeResult = { id: string; outcome: 'created' | 'resubscribed' | 'already' };

type SubscribeOptions = { announce?: boolean; consent: Consent };

/**
 * Subscribes an address (lower-cased) on `consent`: a new one is created, an unsubscribed one is subscribed again, a
 * subscribed one is left as it is. Audited; shared by the staff API and the public form, whose subscriptions are
 * announced (`announce`) as the `newsletter.subscribed` webhook event.
 */
export function subscribe(db: Db, actor: Actor, email: string, name: string | null | undefined, options: SubscribeOptions): Promise<SubscribeResult> {
  return audited(db, actor, (work) => subscribeIn(work, email, name, options));
}

/** `subscribe` within a transaction under way. */
export async function subscribeIn(work: Work, email: string, name: string | null | undefined, options: SubscribeOptions): Promise<SubscribeResult> {
  const address = email.trim().toLowerCase();
  const [inserted] = await work.tx.insert(subscriptions).values({ email: address, name: name ?? null, ...consentColumns(options.consent) }).onConflictDoNothing().returning();
  if (inserted) {
    // Emitted first, so the create's own statement records it.
    if (options.announce) work.emit('newsletter.subscribed', { id: inserted.id, resource: newsletterResource.name, resubscribed: false, after: inserted });
    await work.audit({ action: 'create', resource: newsletterResource, id: inserted.id, after: inserted });
    return { id: inserted.id, outcome: 'created' as const };
  }
  const [current] = await work.tx.select().from(subscriptions).where(eq(subscriptions.email, address)).for('update');
  if (current.status === 'subscribed') return { id: current.id, outcome: 'already' as const };
  const row = await changeSubscription(work, current.id, { status: 'subscribed', ...(name ? { name } : {}) }, options.consent);
  if (options.announce) work.emit('newsletter.subscribed', { id: row.id, resource: newsletterResource.name, resubscribed: true, after: row });
  return { id: current.id, outcome: 'resubscribed' as const };
}

/**
 * Unsubscribes an address (the link in campaign e-mails). A campaign may be sent to an address that never subscribed
 * (explicit recipients): its unsubscription is kept all the same, as a new `unsubscribed` row (both times now), so
 * the next campaign naming it skips it. An address already unsubscribed changes nothing. Audited.
 */
export function unsubscribe(db: Db, actor: Actor, email: string) {
  const address = email.trim().toLowerCase();
  return audited(db, actor, async (work) => {
    const now = clock.now();
    const [inserted] = await work.tx.insert(subscriptions).values({ email: address, status: 'unsubscribed', subscribed_at: now, unsubscribed_at: now })
      .onConflictDoNothing().returning();
    if (inserted) return void (await work.audit({ action: 'create', resource: newsletterResource, id: inserted.id, after: inserted }));
    const [current] = await work.tx.select().from(subscriptions).where(eq(subscriptions.email, address)).for('update');
    if (current.status !== 'unsubscribed') await changeSubscription(work, current.id, { status: 'unsubscribed' });
  });
}

export default async function newsletterRoutes(app: App) {
  const { db } = app.database;
  resourceRoutes(app, newsletterResource, {
    path: '/api/crm/newsletters',
    Item: Subscription,
    create: {
      body: SubscribeInput,
      summary: 'Subscribe an address (an unsubscribed one is subscribed again: 200)',
      handle: async (body, { actor }) => {
        const result = await subscribe(db, actor, body.email, body.name, { consent: staffConsent() });
        if (result.outcome === 'already') throw conflict('The address is already subscribed');
        return result.outcome === 'resubscribed' ? { code: 200, body: { id: result.id, message: 'Subscribed again' } } : { code: 201, body: { id: result.id, message: 'Subscribed' } };
      },
      answer: { schema: { 200: Created, 201: Created }, messages: { 200: 'Subscribed again', 201: 'Subscribed' } },
    },
    update: {
      body: SubscriptionPatch,
      summary: 'Change a subscription',
      change: (work, id, _values, body) => changeSubscription(work, id, body),
    },
  });
}

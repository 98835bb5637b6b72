import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.js';
import { newsletterSubscriptions, SUBSCRIPTION_STATUSES } from '../../db/schema/index.js';
import { auditedTransaction, type Collection, deleteRecord, findOne, updateRecord } from '../../http/crud.js';
import { conflict } from '../../http/errors.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { Created, Email, errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';

export const newsletterCollection: Collection = {
  table: newsletterSubscriptions, id: newsletterSubscriptions.id, module: 'crm', resource: 'newsletters', label: 'Newsletter subscription',
};

export const Subscription = Strict({
  id: Uuid(),
  email: Type.String(),
  name: Nullable(Type.String()),
  status: StringEnum(SUBSCRIPTION_STATUSES),
  subscribed_at: Timestamp(),
  unsubscribed_at: Nullable(Timestamp()),
});

export const SubscribeInput = Strict({ email: Email(), name: Type.Optional(Nullable(RequiredText())) });
const SubscriptionPatch = PartialStrict(Strict({ status: StringEnum(SUBSCRIPTION_STATUSES), name: Nullable(RequiredText()) }));

export const newsletterList: ListSpec = {
  collection: 'newsletters',
  table: newsletterSubscriptions,
  id: newsletterSubscriptions.id,
  sortable: { subscribed_at: newsletterSubscriptions.subscribed_at },
  defaultSort: 'subscribed_at',
  sortParams: false,
  filters: { status: { schema: StringEnum(SUBSCRIPTION_STATUSES), where: (v) => eq(newsletterSubscriptions.status, v) } },
};

export const newsletterView: View = {
  fields: {
    id: newsletterSubscriptions.id, email: newsletterSubscriptions.email, name: newsletterSubscriptions.name, status: newsletterSubscriptions.status,
    subscribed_at: newsletterSubscriptions.subscribed_at, unsubscribed_at: newsletterSubscriptions.unsubscribed_at,
  },
};

export type SubscribeResult = { id: string; outcome: 'created' | 'resubscribed' | 'already' };

/**
 * Subscribes an address (lower-cased): a new one is created, an unsubscribed one is subscribed again, a subscribed
 * one is left as it is. Audited; shared by the staff API and the public form.
 */
export function subscribe(app: App, request: FastifyRequest, email: string, name?: string | null): Promise<SubscribeResult> {
  const address = email.trim().toLowerCase();
  return auditedTransaction(app, request, async (tx, audit) => {
    const [inserted] = await tx.insert(newsletterSubscriptions).values({ email: address, name: name ?? null }).onConflictDoNothing().returning();
    if (inserted) {
      await audit(tx, { action: 'create', module: 'crm', resource: 'newsletters', resourceId: inserted.id, after: inserted });
      return { id: inserted.id, outcome: 'created' as const };
    }
    const [current] = await tx.select().from(newsletterSubscriptions).where(eq(newsletterSubscriptions.email, address)).for('update');
    if (current.status === 'subscribed') return { id: current.id, outcome: 'already' as const };
    const [row] = await tx.update(newsletterSubscriptions)
      .set({ status: 'subscribed', subscribed_at: new Date(), unsubscribed_at: null, ...(name ? { name } : {}) })
      .where(eq(newsletterSubscriptions.id, current.id))
      .returning();
    await audit(tx, { action: 'update', module: 'crm', resource: 'newsletters', resourceId: row.id, before: current, after: row });
    return { id: row.id, outcome: 'resubscribed' as const };
  });
}

/** Newsletter subscriptions: who receives campaigns. */
export default async function newsletterRoutes(app: App) {
  app.get('/api/crm/newsletters', {
    schema: { summary: 'List newsletter subscriptions, newest first', querystring: listQuerySchema(newsletterList), response: { 200: Paginated(Subscription), ...errorResponses } },
  }, async (request) => app.lists.page(newsletterList, newsletterView, request.query as ListQuery));

  app.get('/api/crm/newsletters/:id', {
    schema: { summary: 'One subscription', params: IdParams, response: { 200: Subscription, ...errorResponses } },
  }, async (request) => findOne(app.database.db, newsletterCollection, newsletterView, request.params.id));

  app.post('/api/crm/newsletters', {
    schema: {
      summary: 'Subscribe an address (an unsubscribed one is subscribed again: 200)',
      body: SubscribeInput,
      response: { 200: Created, 201: Created, ...errorResponses },
    },
  }, async (request, reply) => {
    const body = request.body as typeof SubscribeInput.static;
    const result = await subscribe(app, request, body.email, body.name);
    if (result.outcome === 'already') throw conflict('The address is already subscribed');
    if (result.outcome === 'resubscribed') return reply.code(200).send({ id: result.id, message: 'Subscribed again' });
    return reply.code(201).send({ id: result.id, message: 'Subscribed' });
  });

  app.patch('/api/crm/newsletters/:id', {
    schema: { summary: 'Change a subscription', params: IdParams, body: SubscriptionPatch, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const body = request.body as { status?: 'subscribed' | 'unsubscribed'; name?: string | null };
    await updateRecord(app, request, newsletterCollection, request.params.id, (current) => {
      const patch: Record<string, unknown> = { ...body };
      if (body.status === 'unsubscribed' && current.status !== 'unsubscribed') patch.unsubscribed_at = new Date();
      if (body.status === 'subscribed' && current.status !== 'subscribed') Object.assign(patch, { unsubscribed_at: null, subscribed_at: new Date() });
      return patch;
    });
    return { message: 'Subscription updated' };
  });

  app.delete('/api/crm/newsletters/:id', {
    schema: { summary: 'Delete a subscription', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, newsletterCollection, request.params.id);
    return { message: 'Subscription deleted' };
  });
}

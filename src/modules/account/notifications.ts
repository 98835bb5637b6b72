import { Type } from '@sinclair/typebox';
import { and, count, desc, eq, isNotNull, isNull, type SQL, sql } from 'drizzle-orm';
import type { App } from '../../app.js';
import { currentPrincipal, requireSession } from '../../auth/guard.js';
import { clock } from '../../clock.js';
import type { Executor } from '../../db/client.js';
import {
  NOTIFICATION_DELIVERIES, NOTIFICATION_KINDS, type NotificationDelivery, type NotificationKind, notificationPreferences, notifications,
} from '../../db/schema/index.js';
import { notFound } from '../../errors.js';
import { named } from '../../http/openapi.js';
import { errorResponses, IdParams, Nullable, Pagination, PartialStrict, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { DEFAULT_DELIVERY } from '../crm/notices.js';
import { notificationItem } from './notification-item.js';

/**
 * The signed-in user's notifications: their inbox, newest first, its unread count, marking read. Any signed-in user
 * (API tokens too), no module permission: each sees only their own. Reading and marking are the user's own inbox
 * state, not a record change: not audited.
 */

const KIND_TEXT: Record<NotificationKind, string> = {
  lead_assigned: 'a lead assigned to you by someone else',
  inquiry_received: 'a website inquiry you may answer',
  mention: 'an @mention of you in a note on a lead you may read',
  lead_to_claim: 'a new lead to claim (lead flow; not sent yet)',
  follow_up_due: 'a follow-up of yours falling due',
  speed_to_lead: 'a lead waiting too long for a first contact (yours, or as its assignee\'s manager)',
};

const Delivery = (kind: NotificationKind) => StringEnum(NOTIFICATION_DELIVERIES, { description: `${KIND_TEXT[kind]}; default ${DEFAULT_DELIVERY[kind]}`, examples: [DEFAULT_DELIVERY[kind]] });

/** How the user hears of each kind: in_app, email, both or none. */
export const NotificationSettings = named('NotificationPreferences', Strict(
  Object.fromEntries(NOTIFICATION_KINDS.map((kind) => [kind, Delivery(kind)])) as Record<NotificationKind, ReturnType<typeof Delivery>>,
  { description: 'How you hear of each kind of notification: in_app, email, both or none' },
));
export const NotificationSettingsUpdate = named('NotificationPreferencesUpdate', PartialStrict(NotificationSettings));

export type NotificationSettingsOf = Record<NotificationKind, NotificationDelivery>;

/** A user's delivery preference for every kind (the default where they chose none). */
export async function notificationSettingsOf(db: Executor, userId: string): Promise<NotificationSettingsOf> {
  const rows = await db.select({ kind: notificationPreferences.kind, delivery: notificationPreferences.delivery }).from(notificationPreferences)
    .where(eq(notificationPreferences.user_id, userId));
  return { ...DEFAULT_DELIVERY, ...Object.fromEntries(rows.map((row) => [row.kind, row.delivery])) };
}

/** Sets the kinds named in `changes` (inside the caller's audited transaction). */
export async function saveNotificationSettings(tx: Executor, userId: string, changes: Partial<NotificationSettingsOf>) {
  const rows = Object.entries(changes).map(([kind, delivery]) => ({ user_id: userId, kind: kind as NotificationKind, delivery: delivery! }));
  if (!rows.length) return;
  await tx.insert(notificationPreferences).values(rows)
    .onConflictDoUpdate({ target: [notificationPreferences.user_id, notificationPreferences.kind], set: { delivery: sqlExcluded('delivery'), updated_at: clock.now() } });
}

const sqlExcluded = (column: string) => sql.raw(`excluded.${column}`) as SQL<NotificationDelivery>;

const EXAMPLE_ID = '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d';

export const Notification = named('Notification', Strict({
  id: Uuid(),
  kind: StringEnum(NOTIFICATION_KINDS),
  title: Type.String({ description: 'One line', examples: ['Lead assigned to you: Maria Santos'] }),
  body: Type.String({ description: 'A short text, from the record it is about', examples: ['Juan dela Cruz assigned this lead to you. Interested in: Two-bedroom unit'] }),
  record: Nullable(Strict({
    resource: Type.String({ description: 'The collection of the record it is about', examples: ['leads'] }),
    id: Uuid(),
  }, { description: 'The record it is about (one you could read when it was written); null when it names none' })),
  created_at: Timestamp(),
  read_at: Nullable(Timestamp({ description: 'When you marked it read; null while unread' })),
}, {
  examples: [{
    id: EXAMPLE_ID, kind: 'lead_assigned', title: 'Lead assigned to you: Maria Santos',
    body: 'Juan dela Cruz assigned this lead to you. Interested in: Two-bedroom unit', record: { resource: 'leads', id: '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0e' },
    created_at: '2026-11-23T09:30:00.000Z', read_at: null,
  }],
}));

const Unread = Type.Integer({ minimum: 0, description: 'Your unread notifications, all of them', examples: [3] });

const NotificationPage = named('NotificationPage', Type.Object({ data: Type.Array(Notification), pagination: Pagination, unread: Unread }));

const ListQuery = Type.Object({
  page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
  limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 10 })),
  unread: Type.Optional(Type.Boolean({ description: 'true: only unread ones; false: only read ones; absent: all' })),
}, { additionalProperties: false });

export default async function notificationRoutes(app: App) {
  const { db } = app.database;
  const tags = ['notifications'];
  const session = requireSession(app, { tokens: true });
  const userOf = async (request: Parameters<typeof currentPrincipal>[1]) => (await currentPrincipal(app, request)).user.id;
  const unreadOf = async (userId: string) =>
    (await db.select({ n: count() }).from(notifications).where(and(eq(notifications.user_id, userId), isNull(notifications.read_at))))[0].n;

  app.get('/api/notifications', {
    onRequest: session,
    schema: {
      tags, operationId: 'listNotifications', summary: 'Your notifications, newest first, with your unread count',
      querystring: ListQuery, response: { 200: NotificationPage, ...errorResponses },
    },
  }, async (request) => {
    const userId = await userOf(request);
    const { page = 1, limit = 10, unread } = request.query as typeof ListQuery.static;
    const where = and(eq(notifications.user_id, userId), unread === undefined ? undefined : unread ? isNull(notifications.read_at) : isNotNull(notifications.read_at));
    const [rows, [{ total }], unreadCount] = await Promise.all([
      db.select().from(notifications).where(where).orderBy(desc(notifications.created_at), desc(notifications.id)).limit(limit).offset((page - 1) * limit),
      db.select({ total: count() }).from(notifications).where(where),
      unreadOf(userId),
    ]);
    return {
      data: rows.map(notificationItem),
      pagination: { page, limit, total, totalPages: Math.ceil(total / limit) },
      unread: unreadCount,
    };
  });

  app.get('/api/notifications/unread-count', {
    onRequest: session,
    schema: {
      tags, operationId: 'countUnreadNotifications', summary: 'How many of your notifications are unread (for a badge)',
      response: { 200: named('UnreadNotifications', Strict({ unread: Unread })), ...errorResponses },
    },
  }, async (request) => ({ unread: await unreadOf(await userOf(request)) }));

  app.post('/api/notifications/read-all', {
    onRequest: session,
    schema: {
      tags, operationId: 'readAllNotifications', summary: 'Mark all your unread notifications read',
      response: {
        200: named('NotificationsRead', Strict({
          updated: Type.Integer({ minimum: 0, description: 'How many were unread and are now read', examples: [3] }),
          message: Type.String({ examples: ['3 notifications marked read'] }),
        })),
        ...errorResponses,
      },
    },
  }, async (request) => {
    const userId = await userOf(request);
    const updated = (await db.update(notifications).set({ read_at: clock.now() })
      .where(and(eq(notifications.user_id, userId), isNull(notifications.read_at))).returning({ id: notifications.id })).length;
    return { updated, message: `${updated} notification${updated === 1 ? '' : 's'} marked read` };
  });

  app.post('/api/notifications/:id/read', {
    onRequest: session,
    schema: {
      tags, operationId: 'readNotification', summary: 'Mark one of your notifications read (again: no change)',
      params: IdParams,
      response: { 200: named('NotificationRead', Strict({ message: Type.String({ examples: ['Notification marked read'] }) })), ...errorResponses },
    },
  }, async (request) => {
    const userId = await userOf(request);
    const { id } = request.params as { id: string };
    // Another user's notification answers exactly as an unknown id.
    const [found] = await db.update(notifications).set({ read_at: sql`coalesce(${notifications.read_at}, ${clock.now()})` })
      .where(and(eq(notifications.id, id), eq(notifications.user_id, userId))).returning({ id: notifications.id });
    if (!found) throw notFound('Notification');
    return { message: 'Notification marked read' };
  });
}

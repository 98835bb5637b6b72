import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import { currentPrincipal, requireSession } from '../../auth/guard.js';
import { clock } from '../../clock.js';
import { audited } from '../../data/mutations.js';
import type { Executor } from '../../db/client.js';
import { leadFlowAway, userPreferences } from '../../db/schema/index.js';
import { actorOf } from '../../http/actor.js';
import { named } from '../../http/openapi.js';
import { errorResponses, PartialStrict, Strict } from '../../http/schemas.js';
import { userResource } from './users.js';
import { NotificationSettings, NotificationSettingsUpdate, notificationSettingsOf, saveNotificationSettings } from '../account/notifications.js';

const TaskDigest = Type.Boolean({ description: 'The morning e-mail of overdue and today\'s follow-ups (TASK_DIGEST_HOUR in TASK_TIME_ZONE); on unless turned off' });
const Away = Type.Boolean({ description: 'Away (on leave, out of the office): lead flow skips you in round robins and offers you no leads to claim until you come back' });
const Preferences = Strict({ task_digest: TaskDigest, notifications: NotificationSettings, away: Away });
const PreferencesUpdate = PartialStrict(Strict({ task_digest: TaskDigest, notifications: NotificationSettingsUpdate, away: Away }));

/**
 * The signed-in user's own settings under /api/auth (account routes, beside /api/auth/tokens): whether the morning
 * e-mail of follow-ups comes, how each kind of notification is delivered, whether they are away for lead flow. No module permission needed; a change is
 * audited as a change of the user (iam).
 */
export async function preferenceRoutes(app: App) {
  const { db } = app.database;
  const tags = ['auth'];
  const current = async (userId: string, on: Executor = db) => {
    const [row] = await on.select({ task_digest: userPreferences.task_digest }).from(userPreferences).where(eq(userPreferences.user_id, userId));
    const [away] = await on.select({ user_id: leadFlowAway.user_id }).from(leadFlowAway).where(eq(leadFlowAway.user_id, userId));
    return { task_digest: row?.task_digest ?? true, notifications: await notificationSettingsOf(on, userId), away: Boolean(away) };
  };
  app.get('/api/auth/preferences', {
    onRequest: requireSession(app, { tokens: true }),
    schema: { tags, operationId: 'getPreferences', summary: 'The signed-in user\'s preferences', response: { 200: named('Preferences', Preferences), ...errorResponses } },
  }, async (request) => current((await currentPrincipal(app, request)).user.id));
  app.patch('/api/auth/preferences', {
    onRequest: requireSession(app, { tokens: true }),
    schema: {
      tags, operationId: 'updatePreferences', summary: 'Change the signed-in user\'s preferences (only the fields sent); answers them all',
      body: named('PreferencesUpdate', PreferencesUpdate), response: { 200: Preferences, ...errorResponses },
    },
  }, async (request) => {
    const userId = (await currentPrincipal(app, request)).user.id;
    const { notifications, away, ...body } = request.body as typeof PreferencesUpdate.static;
    // Audited as a change of the user (iam), in the same transaction, when it changes anything.
    await audited(db, await actorOf(app, request), async (work) => {
      const before = await current(userId, work.tx);
      await work.tx.insert(userPreferences).values({ user_id: userId, ...body })
        .onConflictDoUpdate({ target: userPreferences.user_id, set: { ...body, updated_at: clock.now() } });
      if (notifications) await saveNotificationSettings(work.tx, userId, notifications);
      if (away === true) await work.tx.insert(leadFlowAway).values({ user_id: userId }).onConflictDoNothing();
      if (away === false) await work.tx.delete(leadFlowAway).where(eq(leadFlowAway.user_id, userId));
      const after = { ...before, ...body, notifications: { ...before.notifications, ...notifications }, away: away ?? before.away };
      if (after.task_digest !== before.task_digest || after.away !== before.away || JSON.stringify(after.notifications) !== JSON.stringify(before.notifications)) {
        await work.audit({ action: 'update', resource: userResource, id: userId, before, after });
      }
    });
    return current(userId);
  });
}

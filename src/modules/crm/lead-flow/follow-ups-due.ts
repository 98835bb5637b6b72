import { and, asc, eq, gt, isNull, lte, sql } from 'drizzle-orm';
import type { Db } from '../../../db/client.js';
import { crmTasks, leads, notificationPreferences } from '../../../db/schema/index.js';
import { notify, type NoticeServices } from '../notices.js';
import { taskResource } from '../tasks.js';

/**
 * Follow-ups falling due: each open follow-up whose due time has come (within the last day: a follow-up long overdue
 * when this started is not announced late) is announced to its assignee once (notification `follow_up_due`). The
 * notification itself is the memory of what was announced: the sweep reads and writes under one transaction-level
 * advisory lock, so two instances sweeping at once announce each follow-up once. A user who hears of these by e-mail
 * only leaves no notification behind: they are told only of follow-ups due in the last minute (one sweep's window).
 */

const WINDOW_MS = 24 * 60 * 60 * 1000;
const MAIL_ONLY_WINDOW_MS = 60 * 1000;
/** The advisory lock of this sweep (any constant the service uses for nothing else). */
const LOCK = 0x1ead_f10d;

export async function notifyFollowUpsDue(services: NoticeServices, now: Date): Promise<number> {
  return services.database.db.transaction(async (tx) => {
    await tx.execute(sql`select pg_advisory_xact_lock(${LOCK})`);
    const announced = sql`exists (select 1 from notifications n where n.kind = 'follow_up_due' and n.resource = 'tasks' and n.record_id = ${crmTasks.id})`;
    const due = await tx.select({
      id: crmTasks.id, title: crmTasks.title, due_at: crmTasks.due_at, assigned_to: crmTasks.assigned_to,
      lead: sql<string | null>`${leads.first_name} || ' ' || ${leads.last_name}`, delivery: notificationPreferences.delivery,
    }).from(crmTasks).leftJoin(leads, eq(leads.id, crmTasks.lead_id))
      .leftJoin(notificationPreferences, and(eq(notificationPreferences.user_id, crmTasks.assigned_to), eq(notificationPreferences.kind, 'follow_up_due')))
      .where(and(isNull(crmTasks.done_at), lte(crmTasks.due_at, now), gt(crmTasks.due_at, new Date(now.getTime() - WINDOW_MS)), sql`not ${announced}`))
      .orderBy(asc(crmTasks.due_at)).limit(500);
    // The in-app notification is written in this transaction: committed with the lock's release, seen by the next sweep.
    const inTransaction = { ...services, database: { ...services.database, db: tx as unknown as Db } };
    let told = 0;
    for (const task of due) {
      if (task.delivery === 'none') continue;
      if (task.delivery === 'email' && task.due_at.getTime() <= now.getTime() - MAIL_ONLY_WINDOW_MS) continue;
      await notify(inTransaction, {
        userId: task.assigned_to, kind: 'follow_up_due', title: `Follow-up due: ${task.title}`,
        body: task.lead ? `About ${task.lead}: ${task.title}` : task.title, record: { resource: taskResource, id: task.id },
      });
      told++;
    }
    return told;
  });
}

import { and, asc, eq, exists, isNull, lt, notExists, sql } from 'drizzle-orm';
import { clock } from '../clock.js';
import { crmTasks, leads, moduleAccess, taskDigests, userPreferences, users } from '../db/schema/index.js';
import { type DigestTask, taskDigestMail } from '../mail/task-digest.js';
import { localDay } from '../modules/crm/tasks.js';
import { leadResource } from '../modules/crm/lead-resource.js';
import { ownersOfUser } from '../data/owners.js';
import { ownedBy } from '../data/resource.js';
import { defineJob, type Services } from './registry.js';

/** Follow-ups listed in one e-mail; beyond, it says how many more. */
const MAX_LISTED = 50;

/**
 * The morning e-mail of follow-ups: during the local hour TASK_DIGEST_HOUR in TASK_TIME_ZONE, each live user
 * with crm read who has not turned it off (user_preferences.task_digest) and has open follow-ups due before the end of
 * the day gets one e-mail listing the overdue ones and today's. Nothing is sent to a user with nothing due. A user's
 * day is claimed (task_digests, one row per user and local day) before the mail goes: of two instances, or two runs,
 * one sends; a mail that could not be sent gives the claim back, so the next run in the hour tries again.
 */
export async function sendTaskDigests(services: Pick<Services, 'config' | 'database' | 'mailer' | 'log'>, now: Date = clock.now()): Promise<number> {
  const { config, database, mailer, log } = services;
  const db = database.db;
  const day = localDay(now, config.taskTimeZone);
  if (day.hour !== config.taskDigestHour) return 0;
  const due = and(eq(crmTasks.assigned_to, users.id), isNull(crmTasks.done_at), lt(crmTasks.due_at, day.end));
  const people = await db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(and(
    isNull(users.deletedAt),
    exists(db.select({ one: sql`1` }).from(moduleAccess).where(and(eq(moduleAccess.user_id, users.id), eq(moduleAccess.module, 'crm'), eq(moduleAccess.can_read, true)))),
    notExists(db.select({ one: sql`1` }).from(userPreferences).where(and(eq(userPreferences.user_id, users.id), eq(userPreferences.task_digest, false)))),
    notExists(db.select({ one: sql`1` }).from(taskDigests).where(and(eq(taskDigests.user_id, users.id), eq(taskDigests.day, day.date)))),
    exists(db.select({ one: sql`1` }).from(crmTasks).where(due)),
  ));
  // A follow-up's lead is named only to someone who may read it (a colleague may have handed them a call about theirs).
  const readableLeads = async (userId: string) => {
    const owners = await ownersOfUser(db, userId);
    return owners ? ownedBy(leadResource, owners)?.sql : undefined;
  };
  let sent = 0;
  for (const person of people) {
    const claimed = await db.insert(taskDigests).values({ user_id: person.id, day: day.date }).onConflictDoNothing().returning({ day: taskDigests.day });
    if (!claimed.length) continue;
    const release = () => db.delete(taskDigests).where(and(eq(taskDigests.user_id, person.id), eq(taskDigests.day, day.date)));
    try {
      const rows = await db.select({
        title: crmTasks.title, due_at: crmTasks.due_at, lead_id: leads.id, lead_name: sql<string | null>`${leads.first_name} || ' ' || ${leads.last_name}`,
        total: sql<number>`count(*) over ()`,
      }).from(crmTasks).leftJoin(leads, and(eq(leads.id, crmTasks.lead_id), await readableLeads(person.id)))
        .where(and(eq(crmTasks.assigned_to, person.id), isNull(crmTasks.done_at), lt(crmTasks.due_at, day.end)))
        .orderBy(asc(crmTasks.due_at), asc(crmTasks.id)).limit(MAX_LISTED);
      // Done meanwhile: nothing to say after all.
      if (!rows.length) {
        await release();
        continue;
      }
      const tasks: DigestTask[] = rows.map((row) => ({ title: row.title, due_at: row.due_at, lead: row.lead_id ? { id: row.lead_id, name: row.lead_name ?? '' } : null }));
      const overdue = tasks.filter((task) => task.due_at.getTime() < now.getTime());
      const today = tasks.filter((task) => task.due_at.getTime() >= now.getTime());
      const more = Number(rows[0].total) - rows.length;
      await mailer.send({ to: person.email, ...taskDigestMail(person.name, day.date, overdue, today, { baseUrl: config.baseUrl, timeZone: config.taskTimeZone, more }) });
      sent++;
    } catch (err) {
      log.error({ err, user: person.id }, 'task digest not sent; tried again on the next run this hour');
      await release().catch(() => undefined);
    }
  }
  if (sent) log.info({ sent, day: day.date }, 'task digests sent');
  return sent;
}

/** Every quarter of an hour: the digest hour is met in every time zone, even those a half or quarter hour off UTC. */
export const taskDigest = defineJob('task-digest', async (_data, services) => {
  await sendTaskDigests(services);
}, { schedule: '*/15 * * * *' });

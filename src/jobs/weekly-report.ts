import { and, eq, exists, isNull, notExists, sql } from 'drizzle-orm';
import { clock } from '../clock.js';
import { ownersOfUser } from '../data/owners.js';
import { shiftDay } from '../data/stats.js';
import type { Executor } from '../db/client.js';
import { moduleAccess, userPreferences, users, weeklyReports } from '../db/schema/index.js';
import { type WeeklySection, weeklyReportMail } from '../mail/weekly-report.js';
import { agentActivityReport } from '../modules/crm/reports/agent-activity.js';
import { funnelReport } from '../modules/crm/reports/funnel.js';
import type { ReportInput } from '../modules/crm/reports/input.js';
import { projectsReport } from '../modules/crm/reports/projects.js';
import { speedToLeadReport } from '../modules/crm/reports/speed-to-lead.js';
import { localDay } from '../modules/crm/tasks.js';
import { defineJob, type Services } from './registry.js';

const MONDAY = 1;
const number = (value: number | string | null) => (value === null ? '–' : Number(value).toLocaleString('en-US'));
const percent = (value: number | string | null) => (value === null ? '–' : `${Math.round(Number(value) * 100)}%`);

/** The key figures of every report for one reader, over `input`'s range. */
async function sectionsFor(db: Executor, input: ReportInput): Promise<WeeklySection[]> {
  const [funnel, speed, activity, projects] = await Promise.all([
    funnelReport.run(db, input, funnelReport.defaultGroupBy),
    speedToLeadReport.run(db, input, speedToLeadReport.defaultGroupBy),
    agentActivityReport.run(db, input, 'agent'),
    projectsReport.run(db, input, projectsReport.defaultGroupBy),
  ]).then((results) => results.map((result) => result.totals));
  return [
    { title: 'Funnel', path: 'reports/funnel', figures: [
      ['New leads', number(funnel.leads)], ['Contacted', `${number(funnel.contacted)} (${percent(funnel.contacted_rate)})`],
      ['Qualified', `${number(funnel.qualified)} (${percent(funnel.qualified_rate)})`], ['Reserved', number(funnel.reserved)], ['Sold', number(funnel.sold)],
    ] },
    { title: 'Speed to lead', path: 'reports/speed-to-lead', figures: [
      ['Leads assigned', number(speed.assigned)], ['Median minutes to first contact', number(speed.median_minutes)],
      ['Within the limit', percent(speed.within_limit_rate)],
    ] },
    { title: 'Agent activity', path: 'reports/agent-activity', figures: [
      ['Calls', number(activity.calls)], ['E-mails', number(activity.emails)], ['Meetings and site visits', number(Number(activity.meetings) + Number(activity.site_visits))],
      ['Follow-ups completed', number(activity.followups_completed)], ['Follow-ups overdue', number(activity.followups_overdue)],
    ] },
    { title: 'Projects', path: 'reports/projects', figures: [
      ['Reservations', number(projects.reservations)], ['Sales', `${number(projects.sales)} (${number(projects.sales_value)})`],
      ['Cancellations', number(projects.cancellations)], ['Units available', number(projects.available)], ['Months of inventory', number(projects.months_of_inventory)],
    ] },
  ];
}

/**
 * The weekly report: on Monday during the local hour TASK_DIGEST_HOUR in TASK_TIME_ZONE (or whenever `anyHour`, the
 * cron endpoint), each live user with crm read who turned it on (user_preferences.weekly_report) gets the key figures of
 * the week before, as their record scope lets them read them. A user's week (its Monday) is claimed (weekly_reports)
 * before the mail goes: of two instances, or two runs, one sends; a mail that could not be sent gives the claim back.
 */
export async function sendWeeklyReports(services: Pick<Services, 'config' | 'database' | 'mailer' | 'log'>, now: Date = clock.now(), options: { anyHour?: boolean } = {}): Promise<number> {
  const { config, database, mailer, log } = services;
  const db = database.db;
  const today = localDay(now, config.taskTimeZone);
  const weekday = new Date(`${today.date}T00:00:00Z`).getUTCDay();
  if (!options.anyHour && (weekday !== MONDAY || today.hour !== config.taskDigestHour)) return 0;
  const week = shiftDay(today.date, -((weekday + 6) % 7));
  const range = { from: shiftDay(week, -7), to: shiftDay(week, -1) };
  const people = await db.select({ id: users.id, name: users.name, email: users.email }).from(users).where(and(
    isNull(users.deletedAt),
    exists(db.select({ one: sql`1` }).from(moduleAccess).where(and(eq(moduleAccess.user_id, users.id), eq(moduleAccess.module, 'crm'), eq(moduleAccess.can_read, true)))),
    exists(db.select({ one: sql`1` }).from(userPreferences).where(and(eq(userPreferences.user_id, users.id), eq(userPreferences.weekly_report, true)))),
    notExists(db.select({ one: sql`1` }).from(weeklyReports).where(and(eq(weeklyReports.user_id, users.id), eq(weeklyReports.week, week)))),
  ));
  let sent = 0;
  for (const person of people) {
    const claimed = await db.insert(weeklyReports).values({ user_id: person.id, week }).onConflictDoNothing().returning({ week: weeklyReports.week });
    if (!claimed.length) continue;
    try {
      const input: ReportInput = { ...range, timeZone: config.taskTimeZone, owners: await ownersOfUser(db, person.id), now };
      await mailer.send({ to: person.email, ...weeklyReportMail(person.name, range, await sectionsFor(db, input), { baseUrl: config.baseUrl }) });
      sent++;
    } catch (err) {
      log.error({ err, user: person.id }, 'weekly report not sent; tried again on the next run');
      await db.delete(weeklyReports).where(and(eq(weeklyReports.user_id, person.id), eq(weeklyReports.week, week))).catch(() => undefined);
    }
  }
  if (sent) log.info({ sent, week }, 'weekly reports sent');
  return sent;
}

/** Every quarter of an hour, as the morning e-mail: the hour is met in every time zone. */
export const weeklyReport = defineJob('weekly-report', async (_data, services) => {
  await sendWeeklyReports(services);
}, { schedule: '*/15 * * * *' });

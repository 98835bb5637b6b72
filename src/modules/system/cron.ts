import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { purgeActivityLogs } from '../../audit/retention.js';
import { purgeTrash, trashPurgedMessage } from '../../data/trash.js';
import { bearerMatches } from '../../auth/bearer-secret.js';
import { conflict, unauthorized } from '../../errors.js';
import { ErrorBody } from '../../http/schemas.js';
import { clock } from '../../clock.js';
import { LEAD_FLOW_SWEEPS, sweepLeadFlow } from '../crm/lead-flow/sweep.js';
import { sendWeeklyReports } from '../../jobs/weekly-report.js';
import { eraseStaleLeads } from '../crm/privacy/retention.js';
import { BackupError } from '../../backups/archive.js';
import { backupIntoDir } from '../../backups/job.js';

/** Constant-time check of `Authorization: Bearer <CRON_SECRET>`; no secret configured → nobody passes. */
export const cronAuthorised = bearerMatches;

const Purged = (example: { deleted: number; message: string }) => Type.Object({ deleted: Type.Integer(), message: Type.String() }, { examples: [example] });

type Purge = {
  summary: string;
  description?: string;
  example: { deleted: number; message: string };
  /** Its retention in days, from the configuration. */
  days: (config: App['config']) => number;
  run: (app: App, days: number) => Promise<number>;
  message: (deleted: number, days: number) => string;
};

export default async function cronRoutes(app: App) {
  /** A scheduled purge an operator (or an outside scheduler) runs now, with `Authorization: Bearer <CRON_SECRET>`. */
  const purgeRoute = (path: string, purge: Purge) => app.post(path, {
    schema: {
      tags: ['system'], summary: purge.summary, description: purge.description,
      security: [{ cronSecret: [] }],
      response: { 200: Purged(purge.example), 401: ErrorBody },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const days = purge.days(app.config);
    const deleted = await purge.run(app, days);
    request.log.info({ deleted, days }, path);
    return { deleted, message: purge.message(deleted, days) };
  });

  purgeRoute('/api/cron/activity-logs-retention', {
    summary: 'Delete activity logs older than ACTIVITY_LOG_RETENTION_DAYS (bearer CRON_SECRET)',
    example: { deleted: 1204, message: 'Deleted 1204 activity logs older than 365 days' },
    days: (config) => config.activityLogRetentionDays,
    run: (on, days) => purgeActivityLogs(on.database.db, days),
    message: (deleted, days) => `Deleted ${deleted} activity logs older than ${days} days`,
  });

  // The daily trash purge, now: what an operator runs to free the space (or the uploads) of deleted records at once.
  purgeRoute('/api/cron/trash-purge', {
    summary: 'Purge trash entries (deleted cms and crm records) older than TRASH_RETENTION_DAYS (bearer CRON_SECRET)',
    description: 'What the daily trash purge does, run now: the entries deleted more than TRASH_RETENTION_DAYS ago (by the service clock) '
      + 'are removed for good, restored or not, in batches; their records can no longer be restored. Their uploads go with the unused-uploads cleanup.',
    example: { deleted: 12, message: 'Purged 12 trash entries deleted more than 30 days ago' },
    days: (config) => config.trashRetentionDays,
    run: (on, days) => purgeTrash(on.database.db, days),
    message: trashPurgedMessage,
  });

  // The minute's lead-flow sweep, now: what a scheduler outside the service (or a test moving the clock) runs.
  const Swept = Type.Object({
    swept: Type.Object(Object.fromEntries(LEAD_FLOW_SWEEPS.map((sweep) => [sweep.name, Type.Integer({ minimum: 0 })]))),
    message: Type.String(),
  }, { examples: [{ swept: Object.fromEntries(LEAD_FLOW_SWEEPS.map((sweep) => [sweep.name, 2])), message: 'Lead flow swept: 2 leads moved' }] });
  app.post('/api/cron/lead-flow', {
    schema: {
      tags: ['system'], summary: 'Run the lead-flow sweep now: expired claims to their fallback, speed-to-lead reminders (bearer CRON_SECRET)',
      description: 'What the `lead-flow-sweep` job does every minute: each sweep, by the service clock, and how many leads each moved.',
      security: [{ cronSecret: [] }],
      response: { 200: Swept, 401: ErrorBody },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const swept = await sweepLeadFlow(app, clock.now());
    const total = Object.values(swept).reduce((sum, n) => sum + n, 0);
    request.log.info(swept, '/api/cron/lead-flow');
    return { swept, message: `Lead flow swept: ${total} lead${total === 1 ? '' : 's'} moved` };
  });

  // The Monday e-mail now, whatever the hour: what an outside scheduler runs instead of the job's own schedule.
  app.post('/api/cron/weekly-report', {
    schema: {
      tags: ['system'], summary: 'Send this week\'s weekly report to the users who turned it on (bearer CRON_SECRET)',
      description: 'What the Monday job does, run now: each live user with crm read and weekly_report on who has not had this week\'s e-mail '
        + '(the week of today in TASK_TIME_ZONE) gets the key figures of the week before, within their record scope. Once per user and week, '
        + 'across instances and runs.',
      security: [{ cronSecret: [] }],
      response: { 200: Type.Object({ sent: Type.Integer(), message: Type.String() }, { examples: [{ sent: 3, message: 'Sent 3 weekly reports' }] }), 401: ErrorBody },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const sent = await sendWeeklyReports(app, undefined, { anyHour: true });
    return { sent, message: `Sent ${sent} weekly report${sent === 1 ? '' : 's'}` };
  });

  // The daily personal-data retention now: what an outside scheduler (or a test moving the clock) runs.
  app.post('/api/cron/privacy-retention', {
    schema: {
      tags: ['system'], summary: 'Erase the leads past PERSONAL_DATA_RETENTION_MONTHS now (bearer CRON_SECRET)',
      description: 'What the daily `privacy-retention` job does, run now: leads lost, or untouched (no change and no activity), for '
        + 'PERSONAL_DATA_RETENTION_MONTHS months by the service clock are anonymised with the privacy erase, each batch kept as a privacy request '
        + 'of the system (origin `retention`). With the variable unset nothing is erased.',
      security: [{ cronSecret: [] }],
      response: {
        200: Type.Object({ erased: Type.Integer(), requests: Type.Integer(), message: Type.String() }, { examples: [{ erased: 12, requests: 1, message: 'Erased 12 leads past 24 months' }] }),
        401: ErrorBody,
      },
    },
  }, async (request) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const months = app.config.personalDataRetentionMonths;
    const { erased, requests } = await eraseStaleLeads(app);
    request.log.info({ erased, requests }, '/api/cron/privacy-retention');
    const message = months ? `Erased ${erased} lead${erased === 1 ? '' : 's'} past ${months} months` : 'PERSONAL_DATA_RETENTION_MONTHS is not set: nothing erased';
    return { erased, requests, message };
  });

  // A backup taken by the running service itself: on the embedded database (PGlite) no other process may open its
  // files, so `npm run admin -- backup` asks the service for one here.
  app.post('/api/cron/backup', {
    schema: {
      tags: ['system'], summary: 'Take a backup now into BACKUP_DIR (bearer CRON_SECRET)',
      description: 'What the scheduled `backup` job does, run now: one archive with the database, the uploaded files of local storage and a '
        + 'manifest, taken at one instant while requests go on, written into BACKUP_DIR under a dated name; then only the newest BACKUP_KEEP '
        + 'dated backups stay. 409 while another backup of this database is being taken.',
      security: [{ cronSecret: [] }],
      response: {
        201: Type.Object({
          file: Type.String({ description: 'The archive written, a path on the service\'s machine' }),
          tables: Type.Integer(), rows: Type.Integer(), uploads: Type.Integer({ description: 'Uploaded files in the archive' }),
          removed: Type.Integer({ description: 'Older dated backups removed (BACKUP_KEEP)' }), message: Type.String(),
        }, { examples: [{ file: '/var/lib/pms/backups/backup-2026-11-27T02-30-00-000Z.tar.gz', tables: 48, rows: 10452, uploads: 12, removed: 1, message: 'Backup written: 48 tables, 10452 rows, 12 uploaded files' }] }),
        401: ErrorBody, 409: ErrorBody,
      },
    },
  }, async (request, reply) => {
    if (!cronAuthorised(app.config.cronSecret, request.headers.authorization)) throw unauthorized();
    const taken = await backupIntoDir(app.database, app.config).catch((err: unknown) => {
      throw err instanceof BackupError ? conflict(err.message) : err;
    });
    const tables = Object.keys(taken.manifest.database.tables).length;
    const rows = Object.values(taken.manifest.database.tables).reduce((sum, n) => sum + n, 0);
    const uploads = taken.manifest.uploads.files;
    request.log.info({ file: taken.file, tables, rows, uploads }, '/api/cron/backup');
    return reply.code(201).send({ file: taken.file, tables, rows, uploads, removed: taken.removed.length, message: `Backup written: ${tables} tables, ${rows} rows, ${uploads} uploaded files` });
  });
}

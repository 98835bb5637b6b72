import { and, eq, lt, or, sql } from 'drizzle-orm';
import { clock } from '../../../clock.js';
import { SYSTEM } from '../../../data/actor.js';
import { leads } from '../../../db/schema/index.js';
import { defineJob, type Services } from '../../../jobs/registry.js';
import { eraseAndRecord } from './person.js';
import { leadNotErased } from './registry.js';

/** Leads per erase (one transaction, one privacy request each). A knob, so a test sees several batches. */
export const retentionBatch = { size: 100 };

/** The moment `months` calendar months before `now`. */
export function retentionCutoff(now: Date, months: number): Date {
  const cutoff = new Date(now);
  cutoff.setUTCMonth(cutoff.getUTCMonth() - months);
  return cutoff;
}

/**
 * PERSONAL_DATA_RETENTION_MONTHS: leads not yet erased that were not changed since the cutoff and are lost, or have no
 * activity since either, are erased with the privacy erase (by id: a newer lead of the same person stays as it is),
 * a batch a transaction, each batch kept as a privacy request of the system. Off (nothing done) when unset.
 */
export async function eraseStaleLeads(services: Pick<Services, 'database' | 'config'>, now = clock.now()): Promise<{ erased: number; requests: number }> {
  const months = services.config.personalDataRetentionMonths;
  const done = { erased: 0, requests: 0 };
  if (!months) return done;
  const cutoff = retentionCutoff(now, months);
  const { db } = services.database;
  for (;;) {
    const stale = await db.select({ id: leads.id }).from(leads).where(and(
      leadNotErased,
      lt(leads.updated_at, cutoff),
      or(eq(leads.status, 'lost'), sql`not exists (select 1 from crm_activities a where a.lead_id = ${leads.id} and a.occurred_at >= ${cutoff.toISOString()}::timestamptz)`),
    )).orderBy(leads.id).limit(retentionBatch.size);
    if (!stale.length) return done;
    await eraseAndRecord(db, SYSTEM, { leadIds: stale.map((lead) => lead.id) }, { dataDir: services.config.dataDir, origin: 'retention', emailHash: null, phoneHash: null });
    done.erased += stale.length;
    done.requests += 1;
    if (stale.length < retentionBatch.size) return done;
  }
}

/** The daily run, scheduled only when PERSONAL_DATA_RETENTION_MONTHS is set; `POST /api/cron/privacy-retention` runs it now. */
export const privacyRetention = defineJob('privacy-retention', async (_data, services) => {
  const { erased, requests } = await eraseStaleLeads(services);
  if (erased) services.log.info({ erased, requests }, 'personal data retention: leads erased');
}, { schedule: (config) => (config.personalDataRetentionMonths ? '41 3 * * *' : undefined) });

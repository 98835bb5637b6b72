import { sql } from 'drizzle-orm';
import type { Db } from '../../db/client.js';
import { executePrepared } from '../../db/prepared.js';
import { CHANGE_LOG_RETENTION_MS, parseSnapshot } from '../../data/changes.js';
import { SharedReads } from '../../data/shared-reads.js';

/**
 * Timeline pages kept between requests. A page is served again while the change log (the database's record of every
 * committed write) shows nothing since the snapshot it was read in that could change it: no change to the lead, to an
 * activity, follow-up, reservation or audit entry of the lead, nor to the tables read by address or by name (inquiries,
 * subscriptions, campaign deliveries and campaigns, inventory codes, users' names). The check is one small indexed read
 * of the change log; the eleven-source page is not read again. The lead page is an agent's most frequent screen.
 */

/** What a page reads that is logged under another resource name: any change of these is taken as changing the page. */
const READ_WHOLE = ['inquiries', 'newsletters', 'campaign_deliveries', 'campaigns', 'inventory', 'users'];
/** Resources whose rows name the lead: only a change of a row naming this lead (before or after) counts. */
const READ_BY_LEAD = ['activities', 'tasks', 'reservations'];
const WATCHED = ['leads', 'activity_logs', ...READ_BY_LEAD, ...READ_WHOLE].join(',');
/** A kept page is older than this at most (a quarter of what the change log keeps, as kept list pages). */
const MAX_AGE_MS = CHANGE_LOG_RETENTION_MS / 4;
const MAX_KEPT = 1000;

/** A page, the snapshot it was read in (its xmin bounds the change log's read) and when. */
type Kept<Body> = { body: Body; snapshot: string; xmin: number; at: number };

/**
 * Whether anything the page of lead `lead` could show changed in a transaction the kept page's snapshot did not see: a bulk entry (no row
 * id), the lead's own row, a row of a lead's resource naming it, or any row of the others. The (resource, xid) index
 * bounds the read; the statement's text is always the same (prepared).
 */
const changedSince = (lead: string, kept: Kept<unknown>) => sql`select pg_current_snapshot()::text as snapshot, exists (
  select 1 from change_log c
  where c.resource = any(string_to_array(${WATCHED}, ',')) and c.xid >= ${String(kept.xmin)}::text::xid8
    and not pg_visible_in_snapshot(c.xid, ${kept.snapshot}::pg_snapshot)
    and (c.row_id is null
      or (c.resource = 'leads' and c.row_id = ${lead}::uuid)
      or (c.resource = 'activity_logs' and ${lead} in (c.before->>'resource_id', c.after->>'resource_id'))
      or (c.resource = any(string_to_array(${READ_BY_LEAD.join(',')}, ',')) and ${lead} in (c.before->>'lead_id', c.after->>'lead_id'))
      or c.resource = any(string_to_array(${READ_WHOLE.join(',')}, ',')))
) as changed`;

export class KeptTimelines<Body> {
  private kept = new Map<string, Kept<Body>>();
  private checks = new SharedReads<boolean>();

  constructor(private readonly db: Db) {}

  /** The page kept under `key` for lead `leadId`, if nothing since could have changed it. */
  async get(key: string, leadId: string): Promise<Body | undefined> {
    const kept = this.kept.get(key);
    if (!kept) return undefined;
    if (Date.now() - kept.at >= MAX_AGE_MS) {
      this.kept.delete(key);
      return undefined;
    }
    // Requests for one page at once share its check.
    const changed = await this.checks.read(`${key}|${kept.snapshot}`, async () => {
      const [probe] = (await executePrepared(this.db, changedSince(leadId, kept))).rows;
      return probe.changed === true || probe.changed === 't';
    });
    if (changed) {
      if (this.kept.get(key) === kept) this.kept.delete(key);
      return undefined;
    }
    return kept.body;
  }

  /** Keeps a page read in snapshot `snapshot` (pg_current_snapshot's text). */
  keep(key: string, snapshot: string, body: Body) {
    this.kept.delete(key);
    while (this.kept.size >= MAX_KEPT) this.kept.delete(this.kept.keys().next().value!);
    this.kept.set(key, { body, snapshot, xmin: parseSnapshot(snapshot).xmin, at: Date.now() });
  }
}

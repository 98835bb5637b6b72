import { createHmac } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eq, getTableColumns, getTableName, or, type SQL, sql } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import { v7 as uuidv7 } from 'uuid';
import { loggable } from '../../../audit/record.js';
import { clock } from '../../../clock.js';
import type { Actor } from '../../../data/actor.js';
import type { Db, Executor, Tx } from '../../../db/client.js';
import { activityLogs, imports, notifications, type PrivacyFound, privacyRequests, type PrivacyRequestKind, trash, webhookDeliveries } from '../../../db/schema/index.js';
import { rowsOf } from '../../../webhooks/record.js';
import { entryOfResource, ERASED_NAME, ERASED_TEXT, type Found, likeTerm, type Person, PERSONAL_DATA, type PersonalData } from './registry.js';

/**
 * A person's data, found, exported or erased. `findPerson` reads every entry of the registry and then the copies of
 * those records kept elsewhere: the audit trail, the trash, webhook payloads, import files in progress and stored mail.
 * `erasePerson` anonymises all of it in the caller's transaction; stored mail files are rewritten after the commit.
 */

type Row = Record<string, unknown>;

/** Sections that are copies of the person's records, in the order an export shows them. */
export const COPY_SECTIONS = ['audit_entries', 'trash', 'webhook_deliveries', 'imports', 'mail'] as const;
/** Every section a request reports, registry entries first. */
export const SECTIONS = [...PERSONAL_DATA.map((entry) => entry.section), ...COPY_SECTIONS];
/** Copies an export shows (import files are the business's upload; they are only counted and redacted). */
const EXPORTED_COPIES = new Set(['audit_entries', 'trash', 'webhook_deliveries', 'mail']);

/** What was found: ids by section, the records themselves, and what names the person in text. */
export type Findings = {
  found: Found;
  rows: Record<string, Row[]>;
  /** Ids of every record of the person (live or in the trash): their copies lose the person's names too. */
  theirs: Set<string>;
  /** Those and the records naming the person (a campaign): their copies are anonymised field by field. */
  keyed: Set<string>;
  /** Their addresses and phone numbers as stored: redacted wherever they appear. */
  strong: string[];
  /** Their names: redacted in their own records' copies only (a name alone may be someone else's). */
  names: string[];
};

const idList = (list: Iterable<string>) => sql`string_to_array(${[...list].join(',')}, ',')::uuid[]`;
const textIn = (column: SQL, terms: string[]) => (terms.length ? or(...terms.map((term) => sql`${column} ilike ${likeTerm(term)}`)) : undefined);

/** Keyed hash of a normalised value, so a request's record never holds the address or phone in clear. */
export const personHash = (secret: string, kind: 'email' | 'phone', value: string | undefined) =>
  value ? createHmac('sha256', secret).update(`${kind}:${value}`).digest('hex') : null;

/** The table's rows with these ids, whole (`select *`). */
async function rowsWith(db: Executor, table: PgTable, list: string[]): Promise<Row[]> {
  if (!list.length) return [];
  const id = getTableColumns(table).id;
  return (await db.select().from(table).where(sql`${id} = any(${idList(list)})`)) as Row[];
}

/** The table's personal-data entry by its SQL name (trash rows name their table so). */
const entryOfTable = (name: string) => PERSONAL_DATA.find((entry) => getTableName(entry.table) === name);

/** Where stored mail is: the outbox of the embedded default (SMTP_URL unset). */
const outboxOf = (dataDir: string) => join(dataDir, 'outbox');

/** A stored message as text a search can read: quoted-printable soft breaks and escapes undone. */
const readable = (raw: string) => raw.replace(/=\r?\n/g, '').replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));

/** The stored messages that name the person (by address or phone). */
function mailNaming(dataDir: string, terms: string[]): string[] {
  const dir = outboxOf(dataDir);
  if (!terms.length || !existsSync(dir)) return [];
  const lower = terms.map((term) => term.toLowerCase());
  return readdirSync(dir).filter((file) => file.endsWith('.eml')).sort().filter((file) => {
    const text = readable(readFileSync(join(dir, file), 'utf8')).toLowerCase();
    return lower.some((term) => text.includes(term));
  });
}

const unique = (values: (string | null | undefined)[], min: number) =>
  [...new Set(values.filter((v): v is string => typeof v === 'string' && v.trim().length >= min).map((v) => v.trim()))].sort((a, b) => b.length - a.length);

/**
 * Everything about the person. With an e-mail or phone, copies are also found by their text (an audit entry of
 * another record naming the address); for leads by id (the retention job), only the copies of those records.
 */
export async function findPerson(db: Executor, person: Person, dataDir: string): Promise<Findings> {
  const found: Found = {};
  const rows: Record<string, Row[]> = {};
  for (const entry of PERSONAL_DATA) {
    const where = entry.match(person, found);
    rows[entry.section] = where ? ((await db.select().from(entry.table).where(where)) as Row[]) : [];
    found[entry.section] = rows[entry.section].map((row) => String(row.id));
  }
  const theirs = new Set(PERSONAL_DATA.filter((entry) => entry.resource && !entry.shared).flatMap((entry) => found[entry.section]));
  const byText = person.email !== undefined || person.digits !== undefined;
  const strong = unique([
    person.email,
    ...PERSONAL_DATA.flatMap((entry) => rows[entry.section].flatMap((row) => [row.email, row.phone, row.contact_number] as (string | null)[])),
  ], 5).filter((term) => !/^erased-.*@invalid$/i.test(term));
  const namesOf = (entry: PersonalData | undefined, list: Row[]) => (entry?.names ? list.flatMap(entry.names) : []);
  const nameList = PERSONAL_DATA.flatMap((entry) => namesOf(entry, rows[entry.section]));
  const searched = byText ? strong : [];

  // Deleted records of the person, in the trash: matched as their table's entry matches live rows.
  const trashed = new Set<string>();
  for (const entry of PERSONAL_DATA.filter((e) => e.resource && !e.shared)) {
    const where = entry.match(person, found);
    if (!where) continue;
    const name = getTableName(entry.table);
    const hits = rowsOf<{ id: string; record_id: string }>(await db.execute(sql`select t.id, t.record_id from ${trash} t,
      jsonb_populate_record(null::${sql.identifier(name)}, t.record) as ${sql.identifier(name)} where t.resource = ${entry.resource} and (${where})`));
    for (const hit of hits) {
      trashed.add(hit.id);
      theirs.add(hit.record_id);
    }
  }
  const trashRows = (await db.select().from(trash).where(or(
    sql`${trash.id} = any(${idList(trashed)})`, sql`${trash.record_id} = any(${idList(theirs)})`,
    textIn(sql`(${trash.record}::text || ${trash.deleted_with}::text || ${trash.changed_with}::text || coalesce(${trash.title}, ''))`, searched),
  ))) as Row[];
  const deletedIds: string[] = [];
  for (const row of trashRows) {
    if (theirs.has(String(row.record_id)) || trashed.has(String(row.id))) {
      theirs.add(String(row.record_id));
      deletedIds.push(String(row.record_id));
      nameList.push(...namesOf(entryOfResource(String(row.resource)), [row.record as Row]));
      // Rows deleted with it that have an id of their own (its activities; not its routing row, keyed by the lead).
      for (const { row: deleted } of row.deleted_with as { row: Row }[]) {
        if (typeof deleted.id !== 'string') continue;
        theirs.add(deleted.id);
        deletedIds.push(deleted.id);
      }
    }
  }
  rows.trash = trashRows;
  // Notifications about their deleted records, beside those the registry found about the live ones.
  const known = new Set(found.notifications);
  const aboutDeleted = deletedIds.length ? ((await db.select().from(notifications).where(sql`${notifications.record_id} = any(${idList(deletedIds)})`)) as Row[]) : [];
  rows.notifications.push(...aboutDeleted.filter((row) => !known.has(String(row.id))));
  found.notifications = rows.notifications.map((row) => String(row.id));
  const names = unique(nameList, 2).filter((name) => name !== ERASED_NAME && name !== 'Erased' && name !== 'person');
  const keyed = new Set([...theirs, ...PERSONAL_DATA.filter((entry) => entry.shared).flatMap((entry) => found[entry.section])]);
  rows.audit_entries = (await db.select().from(activityLogs)
    .where(or(sql`${activityLogs.resource_id} = any(${idList(keyed)})`, textIn(sql`${activityLogs.changes}::text`, searched)))
    .orderBy(activityLogs.created_at, activityLogs.id)) as Row[];
  rows.webhook_deliveries = (await db.select().from(webhookDeliveries)
    .where(or(sql`(${webhookDeliveries.payload} -> 'data' ->> 'id') = any(string_to_array(${[...keyed].join(',')}, ','))`, textIn(sql`${webhookDeliveries.payload}::text`, searched)))
    .orderBy(webhookDeliveries.created_at, webhookDeliveries.id)) as Row[];
  rows.imports = searched.length ? ((await db.select({ id: imports.id }).from(imports)
    .where(textIn(sql`(coalesce(${imports.content}, '') || ${imports.errors}::text)`, searched))) as Row[]) : [];
  for (const section of ['trash', 'audit_entries', 'webhook_deliveries', 'imports']) found[section] = rows[section].map((row) => String(row.id));
  found.mail = mailNaming(dataDir, searched);
  return { found, rows, theirs, keyed, strong, names };
}

/** Counts per section, every section present. */
export const countsOf = (found: PrivacyFound) => Object.fromEntries(SECTIONS.map((section) => [section, found[section]?.length ?? 0]));

/** The headers of a stored message an export lists (the file itself stays where it is). */
function mailSummary(dataDir: string, file: string) {
  const path = join(outboxOf(dataDir), file);
  if (!existsSync(path)) return { file, stored: false };
  const head = readable(readFileSync(path, 'utf8')).split(/\r?\n\r?\n/, 1)[0].replace(/\r?\n[ \t]+/g, ' ');
  const header = (name: string) => new RegExp(`^${name}:\\s*(.*)$`, 'im').exec(head)?.[1] ?? null;
  return { file, stored: true, date: header('Date'), from: header('From'), to: header('To'), subject: header('Subject') };
}

/** An export's document: the request, then a section per kind, each the whole records found (read again now). */
export async function exportDocument(db: Executor, request: { id: string; kind: string; created_at: Date }, found: PrivacyFound, dataDir: string) {
  const document: Record<string, unknown> = {
    privacy_request: { id: request.id, kind: request.kind, created_at: request.created_at.toISOString() },
    generated_at: clock.now().toISOString(),
  };
  for (const entry of PERSONAL_DATA) {
    if (entry.exported === false) continue;
    document[entry.section] = loggable(await rowsWith(db, entry.table, found[entry.section] ?? []));
  }
  document.audit_entries = loggable(await rowsWith(db, activityLogs, found.audit_entries ?? []));
  document.trash = loggable(await rowsWith(db, trash, found.trash ?? []));
  document.webhook_deliveries = loggable(await rowsWith(db, webhookDeliveries, found.webhook_deliveries ?? []));
  document.mail = (found.mail ?? []).map((file) => mailSummary(dataDir, file));
  return document;
}

const escape = (term: string) => term.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
/** Replaces every term (case-insensitive, as a whole word: a name is not taken out of another word) in a text. */
function redactor(terms: string[]): (text: string) => string {
  if (!terms.length) return (text) => text;
  const longestFirst = [...terms].sort((a, b) => b.length - a.length);
  const pattern = new RegExp(`(?<![\\p{L}\\p{N}])(?:${longestFirst.map(escape).join('|')})(?![\\p{L}\\p{N}])`, 'giu');
  return (text) => text.replace(pattern, ERASED_TEXT);
}

/** A JSON value with every string redacted, at any depth. */
function redactDeep(value: unknown, redact: (text: string) => string): unknown {
  if (typeof value === 'string') return redact(value);
  if (Array.isArray(value)) return value.map((v) => redactDeep(v, redact));
  if (value && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redactDeep(v, redact)]));
  return value;
}

/** A copy of one record (a log's before or after, a trash row): its personal fields anonymised as the entry says. */
function anonymised(entry: PersonalData | undefined, id: string, copy: unknown, redact: (text: string) => string): unknown {
  if (!entry || !copy || typeof copy !== 'object' || Array.isArray(copy)) return copy;
  const row = copy as Row;
  const out: Row = { ...row };
  for (const [key, anonymise] of Object.entries(entry.personal)) {
    if (key in row) out[key] = anonymise(row[key], { id, row, redact });
  }
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Writes a privacy request and its own activity log; returns its id. */
export async function recordRequest(tx: Tx, actor: Actor, values: { kind: PrivacyRequestKind; origin: 'request' | 'retention'; emailHash: string | null; phoneHash: string | null; found: PrivacyFound }) {
  const id = uuidv7();
  const at = clock.now();
  await tx.insert(privacyRequests).values({
    id, kind: values.kind, origin: values.origin, requested_by: actor.userId, email_hash: values.emailHash, phone_hash: values.phoneHash, found: values.found, created_at: at,
  });
  await tx.insert(activityLogs).values({
    id: uuidv7(), user_id: actor.userId, action: values.kind === 'export' ? 'privacy_export' : 'privacy_erase', module: 'crm', resource: 'privacy_requests', resource_id: id,
    changes: { before: {}, after: { kind: values.kind, origin: values.origin, found: countsOf(values.found) } }, ip_address: actor.ip, user_agent: actor.userAgent, created_at: at,
  });
  return { id, created_at: at };
}

/** Rewrites of stored mail, prepared in the transaction and put in place once it committed. */
export type MailRewrites = { files: { path: string; temporary: string }[] };

/**
 * Anonymises everything `findings` holds, in `tx`: each record's personal columns (its other columns, statuses, dates,
 * prices, stay as they are), with one `privacy_erase` activity log per record naming only what it became; the copies
 * (audit entries, trash, webhook payloads, import files, the change log) redacted. Stored mail is prepared beside
 * the messages; `applyMail` puts it in place after the commit (`discardMail` if the transaction failed).
 */
export async function erasePerson(tx: Tx, actor: Actor, findings: Findings, dataDir: string): Promise<MailRewrites> {
  const { rows, theirs, keyed } = findings;
  const everywhere = redactor(findings.strong);
  const ofTheirs = redactor([...findings.strong, ...findings.names]);
  const at = clock.now();
  const logs: (typeof activityLogs.$inferInsert)[] = [];

  for (const entry of PERSONAL_DATA) {
    const columns = getTableColumns(entry.table);
    for (const row of rows[entry.section]) {
      const id = String(row.id);
      const patch: Row = {};
      for (const [key, anonymise] of Object.entries(entry.personal)) {
        const value = anonymise(row[key], { id, row, redact: ofTheirs });
        if (!same(value, row[key])) patch[key] = value;
      }
      if (!Object.keys(patch).length) continue;
      // The erase is no change of the record's own: its dates stay (reports by last change read them).
      const kept = 'updated_at' in columns ? { updated_at: row.updated_at } : {};
      await tx.update(entry.table).set({ ...patch, ...kept } as never).where(eq(columns.id, id));
      if (entry.resource) {
        logs.push({
          id: uuidv7(), user_id: actor.userId, action: 'privacy_erase', module: 'crm', resource: entry.resource, resource_id: id,
          changes: { before: {}, after: loggable(patch) }, ip_address: actor.ip, user_agent: actor.userAgent, created_at: at,
        });
      }
    }
  }

  for (const log of rows.audit_entries) {
    const id = String(log.resource_id);
    const mine = theirs.has(id);
    const changes = log.changes as { before?: unknown; after?: unknown };
    const entry = keyed.has(id) ? entryOfResource(String(log.resource)) : undefined;
    const redact = mine ? ofTheirs : everywhere;
    const next = redactDeep({ ...changes, before: anonymised(entry, id, changes.before, redact), after: anonymised(entry, id, changes.after, redact) }, redact);
    // A change of theirs made by no user came from them (the website's forms): where they were is theirs too.
    const visitor = mine && log.user_id === null && (log.ip_address !== null || log.user_agent !== null);
    if (!same(next, changes) || visitor) {
      await tx.update(activityLogs).set({ changes: next, ...(visitor ? { ip_address: null, user_agent: null } : {}) }).where(eq(activityLogs.id, String(log.id)));
    }
  }

  for (const entry of rows.trash) {
    const mine = theirs.has(String(entry.record_id));
    const redact = mine ? ofTheirs : everywhere;
    const own = mine ? entryOfResource(String(entry.resource)) : undefined;
    const record = redactDeep(anonymised(own, String(entry.record_id), entry.record, redact), redact);
    const deletedWith = (entry.deleted_with as { table: string; row: Row }[]).map(({ table, row }) =>
      ({ table, row: redactDeep(anonymised(mine ? entryOfTable(table) : undefined, String(row.id), row, redact), redact) }));
    const changedWith = (entry.changed_with as { table: string; id: string; before: Row; after: Row }[]).map((change) => {
      const of = theirs.has(change.id) ? entryOfTable(change.table) : undefined;
      const r = of ? ofTheirs : everywhere;
      return { ...change, before: redactDeep(anonymised(of, change.id, change.before, r), r), after: redactDeep(anonymised(of, change.id, change.after, r), r) };
    });
    const title = mine && own?.names ? ERASED_NAME : typeof entry.title === 'string' ? redact(entry.title) : entry.title;
    await tx.update(trash).set({ record: record as Row, deleted_with: deletedWith as never, changed_with: changedWith as never, title: title as string | null })
      .where(eq(trash.id, String(entry.id)));
  }

  for (const delivery of rows.webhook_deliveries) {
    const payload = delivery.payload as { data?: Row };
    const data = payload.data ?? {};
    const id = String(data.id ?? '');
    const redact = theirs.has(id) ? ofTheirs : everywhere;
    const entry = keyed.has(id) ? entryOfResource(String(data.resource ?? '')) : undefined;
    const nextData = { ...(anonymised(entry, id, data, redact) as Row) };
    if ('before' in data) nextData.before = anonymised(entry, id, data.before, redact);
    if ('after' in data) nextData.after = anonymised(entry, id, data.after, redact);
    const next = redactDeep({ ...payload, data: nextData }, redact);
    if (!same(next, payload)) await tx.update(webhookDeliveries).set({ payload: next }).where(eq(webhookDeliveries.id, String(delivery.id)));
  }

  // An import still in progress holds its file: the person's values are masked with as many characters, so the
  // offsets its progress is kept by stay right (their rows then fail validation and are not imported).
  if (rows.imports.length) {
    const mask = new RegExp(findings.strong.map(escape).join('|'), 'gi');
    for (const { id } of rows.imports) {
      const [current] = await tx.select({ content: imports.content, errors: imports.errors }).from(imports).where(eq(imports.id, String(id))).for('update');
      if (!current) continue;
      await tx.update(imports).set({
        content: current.content === null ? null : current.content.replace(mask, (m) => 'x'.repeat(m.length)),
        errors: redactDeep(current.errors, everywhere) as typeof current.errors,
      }).where(eq(imports.id, String(id)));
    }
  }

  // The change log's copies of every row found or changed here (before and after each write, kept an hour for cached
  // totals): emptied, and marked as changes not listed, so every cached total and kept page of them is read again.
  const changed = new Set([...keyed, ...Object.entries(findings.found).filter(([section]) => section !== 'mail').flatMap(([, list]) => list)]);
  if (changed.size) {
    await tx.execute(sql`update change_log set row_id = null, before = null, after = null where row_id = any(${idList(changed)})`);
  }

  for (let i = 0; i < logs.length; i += 500) await tx.insert(activityLogs).values(logs.slice(i, i + 500));
  return prepareMail(dataDir, findings.found.mail ?? [], ofTheirs);
}

/**
 * Each stored message naming the person becomes a short one: its date, sender and message id kept, its recipient and
 * subject redacted (left out when encoded), its body a line saying it was erased (encoded parts cannot be redacted reliably).
 */
function prepareMail(dataDir: string, files: string[], redact: (text: string) => string): MailRewrites {
  const rewrites: MailRewrites = { files: [] };
  for (const file of files) {
    const path = join(outboxOf(dataDir), file);
    if (!existsSync(path)) continue;
    const head = readable(readFileSync(path, 'utf8')).split(/\r?\n\r?\n/, 1)[0].replace(/\r?\n[ \t]+/g, ' ');
    // Encoded words (`=?UTF-8?Q?…?=`, a name with accents) cannot be searched: such a recipient or subject is left out.
    const kept = head.split(/\r?\n/).filter((line) => /^(date|from|to|subject|message-id):/i.test(line) && !(/^(to|subject):/i.test(line) && line.includes('=?'))).map(redact);
    const message = `${kept.join('\n')}\nContent-Type: text/plain; charset=utf-8\n\nThis message was erased on a privacy request.\n`;
    const temporary = `${path}.erasing`;
    writeFileSync(temporary, message);
    rewrites.files.push({ path, temporary });
  }
  return rewrites;
}

export const applyMail = (rewrites: MailRewrites) => rewrites.files.forEach(({ path, temporary }) => renameSync(temporary, path));
export const discardMail = (rewrites: MailRewrites | undefined) => rewrites?.files.forEach(({ temporary }) => rmSync(temporary, { force: true }));

/** Erases in one transaction and records the request; stored mail after the commit. */
export async function eraseAndRecord(db: Db, actor: Actor, person: Person, options: { dataDir: string; origin: 'request' | 'retention'; emailHash: string | null; phoneHash: string | null }) {
  let rewrites: MailRewrites | undefined;
  try {
    const result = await db.transaction(async (tx) => {
      const findings = await findPerson(tx as Tx, person, options.dataDir);
      rewrites = await erasePerson(tx as Tx, actor, findings, options.dataDir);
      const request = await recordRequest(tx as Tx, actor, { kind: 'erase', origin: options.origin, emailHash: options.emailHash, phoneHash: options.phoneHash, found: findings.found });
      return { ...request, found: findings.found };
    });
    applyMail(rewrites!);
    return result;
  } catch (err) {
    discardMail(rewrites);
    throw err;
  }
}

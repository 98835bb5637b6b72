import { type TObject, Type } from '@sinclair/typebox';
import { and, inArray, isNull, or, sql } from 'drizzle-orm';
import { clock } from '../../clock.js';
import { exportColumns } from '../../data/export.js';
import type { Work } from '../../data/mutations.js';
import type { Resource } from '../../data/resource.js';
import type { Executor } from '../../db/client.js';
import { type IMPORT_RESOURCES, inventoryUnits, leads, newsletterSubscriptions, projects, SUBSCRIPTION_STATUSES, users } from '../../db/schema/index.js';
import { Strict, StringEnum } from '../../http/schemas.js';
import { freeInventoryCode, inventoryCode, inventoryResource, UnitInput } from './inventory.js';
import { assertContact, LeadInput } from './leads.js';
import { leadResource } from './lead-resource.js';
import { consentColumns, newsletterResource, staffConsent, SubscribeInput } from './newsletters.js';
import { NOT_A_CRM_READER, crmReader } from './shared.js';
import { hasRules, routeLead } from './lead-flow/routing.js';
import type { NoticeServices } from './notices.js';

export type ImportResource = (typeof IMPORT_RESOURCES)[number];
export type Body = Record<string, unknown>;

/** A row of the file on its way in: its line, the create body built from its cells, and what is wrong with it. */
export type Row = { line: number; body: Body; details: Record<string, string>; context?: Record<string, unknown> };

/**
 * What importing one resource means: the create route's own body schema and checks, the natural keys that make a
 * second import of the same file create nothing, and the create path itself (audited, in the batch's transaction).
 */
export type ImportKind = {
  name: ImportResource;
  /** "leads", "inventory units", "newsletter subscribers": for messages. */
  plural: string;
  resource: Resource;
  /** The create route's body schema (each row is validated exactly as a POST body is). */
  schema: TObject;
  /** The columns of the resource's export: the ones that are no body field are accepted and ignored. */
  exported: string[];
  /** A rule on the file's columns beyond the required ones (a lead needs an e-mail or a phone column). */
  header?: (fields: Set<string>) => string | undefined;
  /** The resource's own checks of one body, as its create route makes them (throws a validation error). */
  check?: (body: Body) => void;
  /** The body as the create route stores it (e-mail addresses lower-case). */
  normalize?: (body: Body) => Body;
  /** References checked for many rows at once (a user, a project): adds to each row's `details`. */
  references?: (db: Executor, rows: Row[]) => Promise<void>;
  /** The natural keys of a valid row: it is a duplicate when any of them is known. */
  keys: (row: Row) => string[];
  /** Which of these rows' keys are already in the database. */
  existing: (db: Executor, rows: Row[]) => Promise<Set<string>>;
  /** Creates the rows (valid, no key known), audited in `work`'s transaction; answers how many were created. */
  create: (work: Work, rows: Row[], services: NoticeServices) => Promise<number>;
};

const headersOf = (resource: Resource) => exportColumns(resource.listView ?? resource.view, resource.export?.json).map((c) => c.header);
const lowerEmail = (body: Body) => (typeof body.email === 'string' ? { ...body, email: body.email.toLowerCase() } : body);
const text = (value: unknown) => (typeof value === 'string' ? value : undefined);

const leadKind: ImportKind = {
  name: 'leads',
  plural: 'leads',
  resource: leadResource,
  schema: LeadInput,
  exported: headersOf(leadResource),
  header: (fields) => (fields.has('email') || fields.has('phone') ? undefined : 'needs an "email" or a "phone" column: a lead needs one of them'),
  check: (body) => assertContact(body as { email?: string | null; phone?: string | null }),
  normalize: lowerEmail,
  // `assigned_to` must be a live user who may read the crm (CONTRACT §8), as the create route checks with `requireAssignee`.
  references: async (db, rows) => {
    const ids = [...new Set(rows.map((row) => text(row.body.assigned_to)).filter((id): id is string => !!id))];
    if (!ids.length) return;
    const found = await db.select({ id: users.id, crmReader }).from(users).where(and(inArray(users.id, ids), isNull(users.deletedAt)));
    const live = new Map(found.map((user) => [user.id.toLowerCase(), user.crmReader]));
    for (const row of rows) {
      const id = text(row.body.assigned_to);
      if (!id) continue;
      const readable = live.get(id.toLowerCase());
      if (readable === undefined) row.details.assigned_to = 'must be an existing user';
      else if (!readable) row.details.assigned_to = NOT_A_CRM_READER;
    }
  },
  keys: ({ body }) => [...(text(body.email) ? [`e:${text(body.email)!.toLowerCase()}`] : []), ...(text(body.phone) ? [`p:${text(body.phone)}`] : [])],
  existing: async (db, rows) => {
    const emails = [...new Set(rows.map((row) => text(row.body.email)?.toLowerCase()).filter((e): e is string => !!e))];
    const phones = [...new Set(rows.map((row) => text(row.body.phone)).filter((p): p is string => !!p))];
    const known = new Set<string>();
    if (!emails.length && !phones.length) return known;
    // Served by leads_email_lower_idx and leads_phone_idx (a bitmap OR of two index scans).
    const email = sql<string | null>`lower(${leads.email})`;
    const conditions = [...(emails.length ? [inArray(email, emails)] : []), ...(phones.length ? [inArray(leads.phone, phones)] : [])];
    const found = await db.select({ email, phone: leads.phone }).from(leads).where(or(...conditions));
    for (const lead of found) {
      if (lead.email) known.add(`e:${lead.email}`);
      if (lead.phone) known.add(`p:${lead.phone}`);
    }
    return known;
  },
  // Rows without an assignee are routed by the lead-flow rules (channel `import`), each in the batch's transaction.
  create: async (work, rows, services) => {
    const created = await work.createMany(leadResource, rows.map((row) => row.body));
    const unassigned = created.filter((lead) => !lead.assigned_to);
    if (unassigned.length && (await hasRules(work.tx))) for (const lead of unassigned) await routeLead({ work, services }, lead, 'import');
    return created.length;
  },
};

const unitKind: ImportKind = {
  name: 'inventory',
  plural: 'inventory units',
  resource: inventoryResource,
  schema: UnitInput,
  exported: headersOf(inventoryResource),
  // The project must exist (the create route's 400 `details.project_id`); its name gives the unit's code.
  references: async (db, rows) => {
    const ids = [...new Set(rows.map((row) => text(row.body.project_id)!.toLowerCase()))];
    if (!ids.length) return;
    const found = await db.select({ id: projects.id, name: projects.name }).from(projects).where(inArray(projects.id, ids));
    const names = new Map(found.map((project) => [project.id.toLowerCase(), project.name]));
    for (const row of rows) {
      const name = names.get(text(row.body.project_id)!.toLowerCase());
      if (name === undefined) row.details.project_id = 'must be an existing project';
      else row.context = { projectName: name };
    }
  },
  keys: ({ body }) => [JSON.stringify([text(body.project_id)!.toLowerCase(), body.block, body.lot])],
  existing: async (db, rows) => {
    const keys = rows.map(({ body }) => sql`(${body.project_id}::uuid, ${body.block}::text, ${body.lot}::text)`);
    if (!keys.length) return new Set();
    // Served by the unique index inventory_units_project_block_lot_key.
    const found = await db.select({ project_id: inventoryUnits.project_id, block: inventoryUnits.block, lot: inventoryUnits.lot }).from(inventoryUnits)
      .where(sql`(${inventoryUnits.project_id}, ${inventoryUnits.block}, ${inventoryUnits.lot}) in (${sql.join(keys, sql`, `)})`);
    return new Set(found.map((unit) => JSON.stringify([unit.project_id.toLowerCase(), unit.block, unit.lot])));
  },
  // The create route's own path: the code derived from the project, block and lot, made free under its advisory lock.
  create: async (work, rows) => {
    for (const { body, context } of rows) {
      const derived = inventoryCode(String(context!.projectName), String(body.block), String(body.lot));
      await work.create(inventoryResource, { ...(body as object), inventory_code: await freeInventoryCode(work, derived) } as never);
    }
    return rows.length;
  },
};

/**
 * Subscribers: the create body (e-mail, name) and, from the export, `status`: an address that had unsubscribed is
 * imported as unsubscribed, never signed up again by an import. Its other exported columns are the service's.
 */
const SubscriberInput = Strict({ ...SubscribeInput.properties, status: Type.Optional(StringEnum(SUBSCRIPTION_STATUSES)) });

const subscriberKind: ImportKind = {
  name: 'newsletters',
  plural: 'newsletter subscribers',
  resource: newsletterResource,
  schema: SubscriberInput,
  exported: headersOf(newsletterResource),
  normalize: lowerEmail,
  keys: ({ body }) => [String(body.email)],
  existing: async (db, rows) => {
    const emails = [...new Set(rows.map((row) => String(row.body.email)))];
    if (!emails.length) return new Set();
    const found = await db.select({ email: newsletterSubscriptions.email }).from(newsletterSubscriptions).where(inArray(newsletterSubscriptions.email, emails));
    return new Set(found.map((s) => s.email));
  },
  // As the create path: insert unless the address is there (then it is left as it is: skipped).
  create: async (work, rows) => {
    const values = rows.map(({ body }) => ({
      email: String(body.email),
      name: (body.name as string | undefined) ?? null,
      status: (body.status as 'subscribed' | 'unsubscribed' | undefined) ?? 'subscribed',
      ...(body.status === 'unsubscribed' ? { unsubscribed_at: clock.now() } : {}),
      ...consentColumns(staffConsent('import')),
    }));
    return (await work.createMany(newsletterResource, values, { skipConflicts: true })).length;
  },
};

export const IMPORT_KINDS: Record<ImportResource, ImportKind> = { leads: leadKind, inventory: unitKind, newsletters: subscriberKind };

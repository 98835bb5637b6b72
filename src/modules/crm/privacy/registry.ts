import { or, type SQL, sql } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import { campaignDeliveries, campaigns, crmActivities, crmTasks, inquiries, leads, newsletterSignups, newsletterSubscriptions, notifications, reservations } from '../../../db/schema/index.js';

/**
 * Where personal data of buyers lives: one entry per table holding rows about a person. An export reads every entry
 * (whole rows, so a column added later appears by itself); an erase sets each entry's personal columns to what they
 * become. Adding a table is one entry here: how its rows are matched to the person, which columns are personal, how
 * each is anonymised. Copies of these rows elsewhere (audit trail, trash, webhook payloads, change log, import files,
 * stored mail) are found through the entries' `resource` names and redacted by `erase.ts`.
 */

/** Who a request is about: an e-mail (lower-case), a phone's digits, or (the retention job) leads by id. */
export type Person = { email?: string; digits?: string; leadIds?: string[] };
/** Ids found so far, by section. */
export type Found = Record<string, string[]>;
/** What a personal value becomes: from the value, the record's id and the text redaction of this erase. */
export type Anonymise = (value: unknown, ctx: { id: string; row: Record<string, unknown>; redact: (text: string) => string }) => unknown;

export type PersonalData = {
  /** Its section in an export and in a request's counts. */
  section: string;
  table: PgTable;
  id: PgColumn;
  /** The collection activity logs, trash entries, notifications and webhook events name its records by. */
  resource?: string;
  /** The person's rows: by their e-mail or phone, or through the records of earlier entries (entries are read in order). */
  match: (person: Person, found: Found) => SQL | undefined;
  /** Personal columns (SQL names) and what each becomes on erase; every other column (status, dates, prices) stays. */
  personal: Record<string, Anonymise>;
  /** Whether the names of the person (first, last, full) are redacted in this record's free text too. */
  names?: (row: Record<string, unknown>) => (string | null | undefined)[];
  /** false: matched and erased, not exported (a campaign is the business's, not the person's). */
  exported?: boolean;
  /** A record that names the person without being theirs (a campaign): its copies lose the person's values only. */
  shared?: boolean;
};

export const ERASED_NAME = 'Erased person';
export const ERASED_TEXT = '[erased]';
export const erasedEmail = (id: string) => `erased-${id}@invalid`;

const to = (value: unknown): Anonymise => () => value;
const email: Anonymise = (_value, { id }) => erasedEmail(id);
const redacted: Anonymise = (value, { redact }) => (typeof value === 'string' ? redact(value) : value);

/** The person's address among a campaign's recipients (found by the redaction, which changes only what names them). */
const recipients: Anonymise = (value, { id, row, redact }) => {
  if (!Array.isArray(value)) return value;
  const theirs = (address: unknown) => typeof address === 'string' && redact(address) !== address;
  return row.status === 'sent' ? value.map((address) => (theirs(address) ? erasedEmail(id) : address)) : value.filter((address) => !theirs(address));
};

const ids = (list: string[] | undefined) => sql`string_to_array(${(list ?? []).join(',')}, ',')::uuid[]`;
const byEmail = (column: PgColumn, person: Person) => (person.email ? sql`lower(${column}) = ${person.email}` : undefined);
/** A phone compared by its digits, as an inquiry is linked to a lead. */
const byDigits = (column: PgColumn, person: Person) => (person.digits ? sql`regexp_replace(${column}, '[^0-9]', '', 'g') = ${person.digits}` : undefined);
const through = (column: PgColumn, list: string[] | undefined) => (list?.length ? sql`${column} = any(${ids(list)})` : undefined);
const anyOf = (...conditions: (SQL | undefined)[]) => {
  const present = conditions.filter((c): c is SQL => c !== undefined);
  return present.length ? or(...present) : undefined;
};

/** A lead the erase has done: its e-mail is the erased address of its own id (no one could have given it before). */
export const leadNotErased = sql`${leads.email} is distinct from 'erased-' || ${leads.id}::text || '@invalid'`;

export const PERSONAL_DATA: PersonalData[] = [
  {
    section: 'leads', table: leads, id: leads.id, resource: 'leads',
    match: (person) => anyOf(byEmail(leads.email, person), byDigits(leads.phone, person), through(leads.id, person.leadIds)),
    personal: { first_name: to('Erased'), last_name: to('person'), email, phone: to(null), notes: to(null) },
    names: (row) => [row.first_name as string, row.last_name as string, `${row.first_name} ${row.last_name}`],
  },
  {
    section: 'inquiries', table: inquiries, id: inquiries.id, resource: 'inquiries',
    match: (person, found) => anyOf(byEmail(inquiries.email, person), byDigits(inquiries.phone, person), through(inquiries.lead_id, found.leads)),
    personal: { name: to(ERASED_NAME), email, phone: to(null), subject: to(ERASED_TEXT), message: to(ERASED_TEXT), response: to(null) },
    names: (row) => [row.name as string],
  },
  {
    // The consent is exported whole and, on erase, keeps when, which form, which wording and how: the record that
    // consent was given stays; the address and where it came from (IP, browser) go.
    section: 'subscriptions', table: newsletterSubscriptions, id: newsletterSubscriptions.id, resource: 'newsletters',
    match: (person) => byEmail(newsletterSubscriptions.email, person),
    personal: { email, name: to(null), consent_ip: to(null), consent_user_agent: to(null) },
    names: (row) => [row.name as string | null],
  },
  {
    // A public sign-up waiting for its confirmation: erased, its link no longer confirms anything (the token's hash is
    // replaced by one no link has).
    section: 'pending_signups', table: newsletterSignups, id: newsletterSignups.id,
    match: (person) => byEmail(newsletterSignups.email, person),
    personal: { email, name: to(null), token_hash: (_value, { id }) => `erased-${id}`, consent_ip: to(null), consent_user_agent: to(null) },
  },
  {
    section: 'reservations', table: reservations, id: reservations.id, resource: 'reservations',
    match: (person, found) => anyOf(byEmail(reservations.email, person), byDigits(reservations.contact_number, person), through(reservations.lead_id, found.leads)),
    personal: { client_name: to(ERASED_NAME), contact_number: to(null), email, notes: to(null) },
    names: (row) => [row.client_name as string],
  },
  {
    section: 'activities', table: crmActivities, id: crmActivities.id, resource: 'activities',
    match: (_person, found) => through(crmActivities.lead_id, found.leads),
    personal: { body: to(null), place: to(null) },
  },
  {
    section: 'follow_ups', table: crmTasks, id: crmTasks.id, resource: 'tasks',
    match: (_person, found) => anyOf(through(crmTasks.lead_id, found.leads), through(crmTasks.inquiry_id, found.inquiries), through(crmTasks.reservation_id, found.reservations)),
    personal: { title: redacted, notes: to(null) },
  },
  {
    section: 'campaign_deliveries', table: campaignDeliveries, id: campaignDeliveries.id,
    match: (person) => byEmail(campaignDeliveries.email, person),
    personal: { email, error: to(null) },
  },
  {
    // A campaign naming the address among its explicit recipients: a sent one keeps its count (the address becomes an
    // erased one), one not sent yet no longer sends to it.
    section: 'campaigns', table: campaigns, id: campaigns.id, resource: 'campaigns', exported: false, shared: true,
    match: (person) => (person.email ? sql`${person.email} = any(${campaigns.recipients})` : undefined),
    personal: { recipients: recipients },
  },
  {
    // In-app notifications about the person's records, or naming their address: the text loses what names them.
    section: 'notifications', table: notifications, id: notifications.id,
    match: (person, found) => anyOf(
      ...[['leads', found.leads], ['inquiries', found.inquiries], ['reservations', found.reservations], ['tasks', found.follow_ups], ['activities', found.activities]]
        .map(([resource, list]) => (list?.length ? sql`(${notifications.resource} = ${resource} and ${notifications.record_id} = any(${ids(list as string[])}))` : undefined)),
      person.email ? sql`(${notifications.title} || ' ' || ${notifications.body}) ilike ${likeTerm(person.email)}` : undefined,
    ),
    personal: { title: redacted, body: redacted },
  },
];

/** `%term%` for ILIKE, with its wildcards taken literally. */
export const likeTerm = (term: string) => `%${term.replace(/[\\%_]/g, (c) => `\\${c}`)}%`;

/** The entry of a collection (activity logs' `resource`) or of a table (trash rows' `table`). */
export const entryOfResource = (resource: string) => PERSONAL_DATA.find((entry) => entry.resource === resource);

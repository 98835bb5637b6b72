import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import { inArray, type SQL, sql } from 'drizzle-orm';
import type { Executor } from '../../../db/client.js';
import { projects, users } from '../../../db/schema/index.js';
import { Strict } from '../../../http/schemas.js';
import { rowsOf } from '../../../webhooks/record.js';
import type { ReportInput } from './input.js';

/** A row's figures: flat numbers (or null where a figure has no value), so a row is also one CSV record. */
export type Figures = Record<string, number | null>;
export type ReportRow = { key: string; label: string; [figure: string]: number | null | string };
export type ReportResult = { rows: ReportRow[]; totals: Figures };

/**
 * One report: its name (`/api/crm/reports/{name}`), how it may be grouped, its figures (each described: the OpenAPI
 * document says what each one counts) and how it is computed.
 */
export type Report = {
  name: string;
  operation: string;
  summary: string;
  description: string;
  groupBy: readonly string[];
  defaultGroupBy: string;
  figures: Record<string, TSchema>;
  example: ReportResult & { group_by: string };
  run: (db: Executor, input: ReportInput, groupBy: string) => Promise<ReportResult>;
};

export const Count = (description: string) => Type.Integer({ minimum: 0, description });
export const Share = (description: string) => Type.Union([Type.Number({ minimum: 0, maximum: 1 }), Type.Null()], { description: `${description}; 0–1, null when there is nothing to divide by` });
export const Amount = (description: string) => Type.Number({ description });
export const Minutes = (description: string) => Type.Union([Type.Number({ minimum: 0 }), Type.Null()], { description: `${description}; null when none` });

/** The answer of a report: its range, grouping, one row per group and the totals over every row of the range. */
export function reportSchema(report: Report): TObject {
  const figures = Strict(report.figures);
  return Strict({
    range: Strict({ from: Type.String({ format: 'date' }), to: Type.String({ format: 'date' }) }),
    group_by: Type.String({ enum: [...report.groupBy] }),
    rows: Type.Array(Strict({ key: Type.String({ description: 'What the row is for: an id, a source, a month (YYYY-MM) or week (its Monday, YYYY-MM-DD), or `none`' }), label: Type.String(), ...report.figures })),
    totals: figures,
  }, { examples: [{ range: { from: '2026-03-01', to: '2026-03-30' }, ...report.example }] });
}

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];

/** `March 2026` for `2026-03`. */
export const monthLabel = (month: string) => `${MONTHS[Number(month.slice(5, 7)) - 1]} ${month.slice(0, 4)}`;
/** `Week of 2026-03-02` for the Monday `2026-03-02`. */
export const weekLabel = (monday: string) => `Week of ${monday}`;
/** `Website` for `website`. */
export const sourceLabel = (source: string) => source.charAt(0).toUpperCase() + source.slice(1);

/** The names of the users and projects rows name, read once: id → name. */
export async function namesOf(db: Executor, kind: 'agent' | 'project', ids: string[]): Promise<Map<string, string>> {
  const known = [...new Set(ids.filter((id) => id !== 'none'))];
  if (!known.length) return new Map();
  const rows = kind === 'agent'
    ? await db.select({ id: users.id, name: users.name }).from(users).where(inArray(users.id, known))
    : await db.select({ id: projects.id, name: projects.name }).from(projects).where(inArray(projects.id, known));
  return new Map(rows.map((row) => [row.id, row.name]));
}

/** Human labels of keys of a grouping (`none`: `empty`). */
export async function labelsOf(db: Executor, groupBy: string, keys: string[], empty: string): Promise<(key: string) => string> {
  const agentOrProject = groupBy.startsWith('agent') ? 'agent' : groupBy === 'project' ? 'project' : undefined;
  const names = agentOrProject ? await namesOf(db, agentOrProject, keys.map((key) => key.split('|')[0])) : new Map<string, string>();
  const one = (part: string, kind: string) => {
    if (part === 'none') return empty;
    if (kind === 'month') return monthLabel(part);
    if (kind === 'week') return weekLabel(part);
    if (kind === 'source') return sourceLabel(part);
    return names.get(part) ?? part;
  };
  const kinds = groupBy.split('_');
  return (key) => key.split('|').map((part, i) => one(part, kinds[i] ?? groupBy)).join(', ');
}

/**
 * The rows of a report's statement, run without JIT compilation: its row estimates are rough (ranges of instants, a
 * year of leads), and PostgreSQL compiled a funnel of 20,000 leads for three seconds to run it in a hundred
 * milliseconds. With 64 MB to sort and hash in (the default is 4 MB): a month of a million leads' activities was
 * sorted on disk by agent and week, and their grouping spilled too; grouped in memory it takes a third of the time.
 */
export async function reportRows<T>(db: Executor, query: SQL): Promise<T[]> {
  return db.transaction(async (tx) => {
    await tx.execute(sql`set local jit = off`);
    await tx.execute(sql`set local work_mem = '64MB'`);
    return rowsOf<T>(await tx.execute(query));
  });
}

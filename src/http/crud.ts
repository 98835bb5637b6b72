import { and, eq, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { currentPrincipal } from '../auth/guard.js';
import { actorOf, recordChange } from '../audit/record.js';
import type { Executor, Tx } from '../db/client.js';
import type { ModuleName } from '../db/schema/index.js';
import { notFound } from './errors.js';
import { selectView, type View } from './list.js';

/** A collection that the audited operations below can change. */
export type Collection = {
  table: PgTable;
  id: PgColumn;
  module: ModuleName;
  /** Collection name: the activity log's `resource` and the list's change-version key. */
  resource: string;
  /** For messages: "Project", "Lead". */
  label: string;
};

type Row = Record<string, any>;
type Hooks = {
  /** Runs in the transaction with the locked current row, before the change: throw to refuse (409, 400). */
  check?: (current: Row, tx: Tx) => Promise<void> | void;
  /** Runs in the transaction after the change, e.g. to change and audit a related record. */
  after?: (row: Row, tx: Tx, audit: AuditFn) => Promise<void>;
};
export type AuditFn = typeof recordChange extends (tx: any, actor: any, change: infer C) => any ? (tx: Executor, change: C) => Promise<boolean> : never;

/** Opens a transaction with an audit function bound to the request's actor. */
export async function auditedTransaction<T>(app: FastifyInstance, request: FastifyRequest, work: (tx: Tx, audit: AuditFn) => Promise<T>): Promise<T> {
  const principal = await currentPrincipal(app, request).catch(() => null);
  const actor = actorOf(request, principal?.user.id ?? null);
  return app.database.db.transaction((tx) => work(tx as Tx, (t, change) => recordChange(t, actor, change)));
}

/** Locks and returns a row, or 404. */
export async function lockRow(tx: Executor, c: Collection, id: string): Promise<Row> {
  const [row] = (await (tx.select().from(c.table as any) as any).where(eq(c.id, id)).for('update')) as Row[];
  if (!row) throw notFound(c.label);
  return row as Row;
}

/** Audited insert: the row and its `create` log in one transaction. */
export function createRecord(app: FastifyInstance, request: FastifyRequest, c: Collection, values: Row, hooks: Pick<Hooks, 'after'> = {}): Promise<Row> {
  return auditedTransaction(app, request, async (tx, audit) => {
    const [row] = (await tx.insert(c.table as any).values(values).returning()) as Row[];
    await audit(tx, { action: 'create', module: c.module, resource: c.resource, resourceId: (row as Row).id, after: row as Row });
    await hooks.after?.(row as Row, tx, audit);
    return row as Row;
  });
}

/** Audited partial update of an existing row (404 when missing); the log holds only the changed fields. */
export function updateRecord(app: FastifyInstance, request: FastifyRequest, c: Collection, id: string, patch: Row | ((current: Row) => Row), hooks: Hooks = {}): Promise<Row> {
  return auditedTransaction(app, request, async (tx, audit) => {
    const current = await lockRow(tx, c, id);
    await hooks.check?.(current, tx);
    const values = typeof patch === 'function' ? patch(current) : patch;
    const [row] = Object.keys(values).length
      ? ((await tx.update(c.table as any).set(values).where(eq(c.id, id)).returning()) as Row[])
      : [current];
    await audit(tx, { action: 'update', module: c.module, resource: c.resource, resourceId: id, before: current, after: row as Row });
    await hooks.after?.(row as Row, tx, audit);
    return row as Row;
  });
}

/** Audited delete of an existing row (404 when missing). */
export function deleteRecord(app: FastifyInstance, request: FastifyRequest, c: Collection, id: string, hooks: Hooks = {}): Promise<Row> {
  return auditedTransaction(app, request, async (tx, audit) => {
    const current = await lockRow(tx, c, id);
    await hooks.check?.(current, tx);
    await tx.delete(c.table as any).where(eq(c.id, id));
    await audit(tx, { action: 'delete', module: c.module, resource: c.resource, resourceId: id, before: current });
    await hooks.after?.(current, tx, audit);
    return current;
  });
}

/** Reads one row through a view, or 404; `scope` hides rows the API does not show (e.g. deleted users). */
export async function findOne<T = Row>(db: Executor, c: Pick<Collection, 'table' | 'id' | 'label'>, view: View, id: string, scope?: SQL): Promise<T> {
  const [row] = await selectView(db, c.table, view).where(and(eq(c.id, id), scope)).limit(1);
  if (!row) throw notFound(c.label);
  return row as T;
}

import { eq } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { Patch, Work } from './mutations.js';
import type { Resource, RowOf } from './resource.js';

/**
 * Audited create, update and delete of a resource holding a secret (a webhook's signing secret, an identity provider's
 * client secret): the activity log holds every field but that one; a change of it is logged as `credential: replaced`,
 * never its value. (Its change-log trigger leaves the column out too: see its migration.)
 */
export function withSecret<T extends PgTable>(resource: Resource<T>, column: keyof RowOf<T> & string) {
  const table = resource.table as PgTable;
  const shown = (row: RowOf<T>) => {
    const { [column]: _secret, ...rest } = row as Record<string, unknown>;
    return rest;
  };
  return {
    /** What the audit trail records of a row. */
    shown,
    insert: async (work: Work, values: Patch<T>): Promise<RowOf<T>> => {
      const [row] = (await work.tx.insert(table).values(values as never).returning()) as RowOf<T>[];
      await work.audit({ action: 'create', resource, id: String((row as { id: unknown }).id), after: shown(row) });
      return row;
    },
    change: async (work: Work, id: string, values: (current: RowOf<T>) => Promise<Patch<T>>): Promise<RowOf<T>> => {
      const current = await work.lock(resource, id);
      const patch = await values(current);
      const [row] = (await work.tx.update(table).set(patch as never).where(eq(resource.id, id)).returning()) as RowOf<T>[];
      const replaced = (row as Record<string, unknown>)[column] !== (current as Record<string, unknown>)[column];
      const marker = (value: string | null) => (replaced ? { credential: value } : {});
      await work.audit({ action: 'update', resource, id, before: { ...shown(current), ...marker(null) }, after: { ...shown(row), ...marker('replaced') } });
      return row;
    },
    remove: async (work: Work, id: string): Promise<void> => {
      const current = await work.lock(resource, id);
      await work.tx.delete(table).where(eq(resource.id, id));
      await work.audit({ action: 'delete', resource, id, before: shown(current) });
    },
  };
}

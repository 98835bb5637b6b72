import { and, eq, like, ne, or, type SQL } from 'drizzle-orm';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { Executor } from '../../db/client.js';
import { conflict } from '../../errors.js';

/** Lower-case ASCII words joined by '-': "Café Déjà Vu!" → "cafe-deja-vu". */
export function slugify(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .replace(/ß/g, 'ss')
    .replace(/[æÆ]/g, 'ae')
    .replace(/[øØ]/g, 'o')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 200)
    .replace(/-+$/g, '');
}

/** What an explicitly sent slug must look like. */
export const SLUG_PATTERN = '^[a-z0-9]+(?:-[a-z0-9]+)*$';

const likeEscape = (s: string) => s.replace(/[\\%_]/g, (c) => `\\${c}`);

/** A free slug from `base` (already slugified): `base`, else `base-2`, `base-3`, … (CONTRACT §12, derived slugs). */
export async function uniqueSlug(tx: Executor, table: PgTable, slugColumn: PgColumn, base: string, fallback = 'item'): Promise<string> {
  const root = base || fallback;
  const rows = await tx.select({ slug: slugColumn }).from(table).where(or(eq(slugColumn, root), like(slugColumn, `${likeEscape(root)}-%`)));
  const taken = new Set(rows.map((r) => r.slug));
  if (!taken.has(root)) return root;
  for (let n = 2; ; n++) if (!taken.has(`${root}-${n}`)) return `${root}-${n}`;
}

/** An explicitly sent slug must be free (409 otherwise); `exceptId` is the record being changed. */
export async function assertSlugFree(tx: Executor, table: PgTable, slugColumn: PgColumn, idColumn: PgColumn, slug: string, exceptId?: string) {
  const where: SQL | undefined = exceptId ? and(eq(slugColumn, slug), ne(idColumn, exceptId)) : eq(slugColumn, slug);
  const [row] = await tx.select({ id: idColumn }).from(table).where(where).limit(1);
  if (row) throw conflict(`The slug "${slug}" is already in use`, { slug: 'is already in use by another record' });
}

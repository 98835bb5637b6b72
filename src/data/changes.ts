import { eq, sql } from 'drizzle-orm';
import type { Executor } from '../db/client.js';
import { collectionVersions } from '../db/schema/index.js';

/** A collection's change version as a subquery, read in the same statement (and snapshot) as a page or a count. */
export const versionOf = (collection: string) =>
  sql<number>`(select ${collectionVersions.version} from ${collectionVersions} where ${collectionVersions.collection} = ${collection})`;

export async function readVersion(db: Executor, collection: string): Promise<number> {
  const [row] = await db.select({ version: collectionVersions.version }).from(collectionVersions).where(eq(collectionVersions.collection, collection));
  return Number(row?.version ?? 0);
}

/** Bumps a collection's change version; call inside the mutation's transaction (the audited path does). */
export async function bumpVersion(db: Executor, collection: string) {
  await db
    .insert(collectionVersions)
    .values({ collection, version: 1 })
    .onConflictDoUpdate({ target: collectionVersions.collection, set: { version: sql`${collectionVersions.version} + 1` } });
}

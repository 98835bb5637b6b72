import { and, asc, eq, inArray, lt, type SQL, sql } from 'drizzle-orm';
import { clock } from '../clock.js';
import { SYSTEM, type Actor } from '../data/actor.js';
import { audited, type Work } from '../data/mutations.js';
import { defineResource, type ImageFields, type Resource, type RowOf } from '../data/resource.js';
import type { Db, Executor } from '../db/client.js';
import { uploads, users } from '../db/schema/index.js';
import type { Storage } from './storage.js';

/**
 * Stored names: 32 random hex characters (the key) and an extension; a variant adds its width. Nothing else is
 * ever served or deleted.
 */
export const STORED_NAME = /^([a-f0-9]{32})(?:-(\d{3,4}))?\.(jpg|png|webp|gif|avif)$/;
/** An original's name, as the API names uploads. */
export const UPLOAD_NAME = '^[a-f0-9]{32}\\.(jpg|png|webp|gif|avif)$';
/** An upload named in a field: its path `/uploads/<name>` or an absolute URL ending so. */
const IN_FIELD = /\/uploads\/([a-f0-9]{32}(?:-\d{3,4})?\.(?:jpg|png|webp|gif|avif))$/;

export const variantName = (key: string, width: number) => `${key}-${width}.webp`;
export const keyOf = (name: string) => name.slice(0, 32);

/** Every upload, listed by staff; created and deleted through the upload routes, each change audited. */
export const uploadResource = defineResource({
  name: 'uploads',
  module: 'cms',
  label: 'Upload',
  table: uploads,
  id: uploads.id,
  view: {
    fields: {
      id: uploads.id, name: uploads.name, type: uploads.type, bytes: uploads.bytes, width: uploads.width, height: uploads.height,
      variants: uploads.variants, created_by: { id: users.id, name: users.name }, created_at: uploads.created_at,
    },
    joins: (query) => query.leftJoin(users, eq(users.id, uploads.created_by)),
  },
  list: {
    sortable: { created_at: uploads.created_at, bytes: uploads.bytes, name: uploads.name },
    defaultSort: 'created_at',
    search: [uploads.name],
  },
});

export type Upload = RowOf<typeof uploads>;

// ── What an image field can give ──────────────────────────────────────────────────────────────────────────

export type ImageVariant = { width: number; path: string; url: string };
/** An upload as image fields and the upload answer give it: its size and a `srcset` of its variants and itself. */
export type ImageInfo = { path: string; url: string; width: number; height: number; variants: ImageVariant[]; srcset: string };

export function imageInfo(upload: Pick<Upload, 'name' | 'width' | 'height' | 'variants'>, baseUrl: string): ImageInfo {
  const base = baseUrl.replace(/\/+$/, '');
  const at = (name: string) => ({ path: `/uploads/${name}`, url: `${base}/uploads/${name}` });
  const variants = [...upload.variants].sort((a, b) => a.width - b.width).map((v) => ({ width: v.width, ...at(v.name) }));
  const original = at(upload.name);
  const srcset = [...variants, { width: upload.width, url: original.url }].map((v) => `${v.url} ${v.width}w`).join(', ');
  return { ...original, width: upload.width, height: upload.height, variants, srcset };
}

type Row = Record<string, unknown>;

/** The stored original named by a field's value (`/uploads/<name>` or a URL ending so), if any. */
function uploadNamed(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const match = IN_FIELD.exec(value);
  return match ? match[1] : undefined;
}

/**
 * Adds, beside each image field of these rows, what the uploads table knows of the file it names (null when it
 * names no upload: an external URL, a deleted file). One query for all the rows; the rows are copied, not changed.
 */
export async function withImages(db: Executor, baseUrl: string, rows: Row[], fields: ImageFields): Promise<Row[]> {
  const names = new Set<string>();
  const collect = (row: Row, map: Record<string, string | Record<string, string>>) => {
    for (const [field, sibling] of Object.entries(map)) {
      if (typeof sibling === 'string') {
        const name = uploadNamed(row[field]);
        if (name) names.add(name);
      } else if (Array.isArray(row[field])) {
        for (const item of row[field] as Row[]) collect(item, sibling);
      }
    }
  };
  for (const row of rows) collect(row, fields);
  const known = new Map<string, ImageInfo>();
  if (names.size) {
    // A field naming a variant gives the variants of its original.
    const keys = [...new Set([...names].map(keyOf))];
    const found = await db.select({ name: uploads.name, width: uploads.width, height: uploads.height, variants: uploads.variants })
      .from(uploads).where(inArray(sql`left(${uploads.name}, 32)`, keys));
    for (const upload of found) known.set(keyOf(upload.name), imageInfo(upload, baseUrl));
  }
  const add = (row: Row, map: Record<string, string | Record<string, string>>): Row => {
    const next: Row = { ...row };
    for (const [field, sibling] of Object.entries(map)) {
      if (typeof sibling === 'string') {
        const name = uploadNamed(row[field]);
        next[sibling] = (name && known.get(keyOf(name))) ?? null;
      } else if (Array.isArray(row[field])) {
        next[field] = (row[field] as Row[]).map((item) => add(item, sibling));
      }
    }
    return next;
  };
  return rows.map((row) => add(row, fields));
}

/** A resource's rows with the variants of their image fields (as they are when it declares none). */
export async function withResourceImages<R extends Row>(db: Executor, baseUrl: string, resource: Resource, rows: R[]): Promise<R[]> {
  return resource.images ? (await withImages(db, baseUrl, rows, resource.images)) as R[] : rows;
}

// ── Where an upload is used ───────────────────────────────────────────────────────────────────────────────

/** One record that names an upload (or one of its variants) in one of its fields. */
export type Use = { resource: string; id: string; field: string; title: string | null };

/**
 * Every field that may name an upload: image fields, and Markdown that may embed one. A field uses an upload when
 * it holds the upload's key (32 random hex characters), so paths, absolute URLs and variants all count.
 */
const SOURCES: { resource: string; table: string; field: string; title: string; join?: string; where?: string }[] = [
  { resource: 'projects', table: 'projects', field: 'cover_photo', title: 't.name' },
  { resource: 'projects', table: 'projects', field: 'description', title: 't.name' },
  { resource: 'galleries', table: 'gallery_images', field: 'image_url', title: 'p.name', join: 'join projects p on p.id = t.project_id' },
  { resource: 'articles', table: 'articles', field: 'cover_image', title: 't.title' },
  { resource: 'articles', table: 'articles', field: 'content', title: 't.title' },
  { resource: 'careers', table: 'careers', field: 'description', title: 't.title' },
  { resource: 'amenities', table: 'amenities', field: 'cover_photo', title: 't.name' },
  { resource: 'amenities', table: 'amenities', field: 'icon', title: 't.name' },
  { resource: 'campaigns', table: 'campaigns', field: 'content', title: 't.name' },
  { resource: 'users', table: 'users', field: 'image', title: 't.name', where: 't.deleted_at is null' },
  // A deleted record in the trash (and what was deleted with it, a project's gallery) keeps its files until purged.
  { resource: 'trash', table: 'trash', field: 'record', title: 't.title', where: 't.restored_at is null' },
  { resource: 'trash', table: 'trash', field: 'deleted_with', title: 't.title', where: 't.restored_at is null' },
];

const usageQuery = (keys: string) => sql.join(SOURCES.map((s) => sql`select k.key, ${s.resource}::text as resource, t.id::text as id, ${s.field}::text as field, ${sql.raw(s.title)}::text as title
  from jsonb_array_elements_text(${keys}::jsonb) as k(key) join ${sql.identifier(s.table)} t on strpos(t.${sql.identifier(s.field)}::text, k.key) > 0
  ${sql.raw(s.join ?? '')} ${s.where ? sql.raw(`where ${s.where}`) : sql``}`), sql` union all `);

/** The records using each of these uploads (by key), in one statement. */
export async function usageOf(db: Executor, keys: string[]): Promise<Map<string, Use[]>> {
  const usage = new Map<string, Use[]>(keys.map((key) => [key, []]));
  if (!keys.length) return usage;
  const { rows } = await db.execute(sql`${usageQuery(JSON.stringify(keys))} order by 1, 2, 5, 3`) as unknown as { rows: (Use & { key: string })[] };
  for (const { key, ...use } of rows) usage.get(key)?.push(use);
  return usage;
}

export const describeUses = (uses: Use[]) => [...new Set(uses.map((u) => (u.resource === 'trash'
  // A deleted record (and what went with it) keeps its files while it can be restored.
  ? `the deleted ${u.title ? `"${u.title}"` : u.id} in the trash (restorable until it is purged)`
  : `${u.resource} ${u.title ? `"${u.title}"` : u.id} (${u.field})`)))].join(', ');

// ── Removing ──────────────────────────────────────────────────────────────────────────────────────────────

/** Every stored file of an upload: the original and its variants. */
export const filesOf = (upload: Pick<Upload, 'name' | 'variants'>) => [upload.name, ...upload.variants.map((v) => v.name)];

/** The upload named so, locked until the transaction ends; undefined when there is none. */
export async function lockUpload(work: Work, name: string): Promise<Upload | undefined> {
  const [row] = await work.tx.select().from(uploads).where(eq(uploads.name, name)).for('update');
  return row;
}

/**
 * Deletes an upload's row (audited) and its files, in the transaction: should the storage fail, the row stays.
 * The caller has checked that nothing uses it.
 */
export async function removeUpload(work: Work, storage: Storage, upload: Upload): Promise<void> {
  await work.remove(uploadResource, upload.id);
  await storage.delete(filesOf(upload));
}

const BATCH = 100;

/**
 * Removes uploads older than `hours` that nothing uses, a batch at a time (each upload in its own short
 * transaction, audited as the system's). Returns how many were removed.
 */
export async function removeUnusedUploads(db: Db, storage: Storage, hours: number, actor: Actor = SYSTEM): Promise<number> {
  const cutoff = new Date(clock.now().getTime() - hours * 3600 * 1000);
  let removed = 0;
  let after: SQL | undefined;
  for (;;) {
    const batch = await db.select({ name: uploads.name, created_at: uploads.created_at, id: uploads.id }).from(uploads)
      .where(and(lt(uploads.created_at, cutoff), after)).orderBy(asc(uploads.created_at), asc(uploads.id)).limit(BATCH);
    if (!batch.length) break;
    const usage = await usageOf(db, batch.map((u) => keyOf(u.name)));
    for (const candidate of batch) {
      if (usage.get(keyOf(candidate.name))?.length) continue;
      const gone = await audited(db, actor, async (work) => {
        const upload = await lockUpload(work, candidate.name);
        // Checked again under the lock: a record may have started using it meanwhile.
        if (!upload || (await usageOf(work.tx, [keyOf(upload.name)])).get(keyOf(upload.name))?.length) return false;
        await removeUpload(work, storage, upload);
        return true;
      });
      if (gone) removed++;
    }
    const last = batch[batch.length - 1];
    after = sql`(${uploads.created_at}, ${uploads.id}) > (${last.created_at.toISOString()}::timestamptz, ${last.id}::uuid)`;
    if (batch.length < BATCH) break;
  }
  return removed;
}

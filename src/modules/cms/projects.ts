import { Type } from '@sinclair/typebox';
import { asc, eq } from 'drizzle-orm';
import type { App } from '../../app.js';
import type { Executor } from '../../db/client.js';
import { galleryImages, inventoryUnits, PROJECT_STATUSES, PROJECT_TYPES, projects } from '../../db/schema/index.js';
import { auditedTransaction, type Collection, deleteRecord, findOne, lockRow } from '../../http/crud.js';
import { conflict } from '../../http/errors.js';
import type { ListSpec, View } from '../../http/list.js';
import { errorResponses, IdParams, Message, Nullable, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { assertRange, type ContentCollection, publishingInput, registerContentRoutes, SlugInput } from './content.js';

export const projectCollection: ContentCollection = {
  table: projects, id: projects.id, module: 'cms', resource: 'projects', label: 'Project', slug: projects.slug, slugSource: 'name',
};
export const galleryCollection: Collection = { table: galleryImages, id: galleryImages.id, module: 'cms', resource: 'galleries', label: 'Gallery image' };

// ── Schemas ───────────────────────────────────────────────────────────────────────────────────────────────

export const Coordinates = Strict({ lat: Type.Number({ minimum: -90, maximum: 90 }), lng: Type.Number({ minimum: -180, maximum: 180 }) });
export const Landmark = Strict({ name: RequiredText(), distance: RequiredText() });
export const PriceRange = Strict({ min: Type.Number({ minimum: 0 }), max: Type.Number({ minimum: 0 }) });

export const GalleryImage = Strict({
  id: Uuid(),
  image_url: Type.String(),
  caption: Nullable(Type.String()),
  display_order: Type.Integer(),
  house_model: Nullable(Type.String()),
});

const listFields = {
  id: Uuid(),
  name: Type.String(),
  slug: Type.String(),
  status: StringEnum(PROJECT_STATUSES),
  type: StringEnum(PROJECT_TYPES),
  stage: Nullable(Type.String()),
  location: Nullable(Type.String()),
  price_range: Nullable(PriceRange),
  cover_photo: Nullable(Type.String()),
  published: Type.Boolean(),
  publish_date: Nullable(Timestamp()),
  created_at: Timestamp(),
  updated_at: Timestamp(),
};

/** A project in lists: SPEC.md's fields without the detail-only ones. */
export const ProjectListItem = Strict(listFields);

/** A project in full, with its gallery ordered by display_order. */
export const ProjectDetail = Strict({
  ...listFields,
  description: Nullable(Type.String()),
  coordinates: Nullable(Coordinates),
  nearby_landmarks: Type.Array(Landmark),
  amenities: Type.Array(Type.String()),
  seo_title: Nullable(Type.String()),
  seo_description: Nullable(Type.String()),
  seo_keywords: Nullable(Type.String()),
  galleries: Type.Array(GalleryImage),
});

export const ProjectInput = Strict({
  name: RequiredText(),
  slug: Type.Optional(SlugInput()),
  description: Type.Optional(Nullable(Text())),
  status: StringEnum(PROJECT_STATUSES),
  type: StringEnum(PROJECT_TYPES),
  stage: Type.Optional(Nullable(RequiredText())),
  location: Type.Optional(Nullable(RequiredText())),
  coordinates: Type.Optional(Nullable(Coordinates)),
  nearby_landmarks: Type.Optional(Type.Array(Landmark, { maxItems: 100 })),
  amenities: Type.Optional(Type.Array(RequiredText(), { maxItems: 200 })),
  price_range: Type.Optional(Nullable(PriceRange)),
  cover_photo: Type.Optional(Nullable(RequiredText())),
  seo_title: Type.Optional(Nullable(RequiredText())),
  seo_description: Type.Optional(Nullable(Text({ maxLength: 1000 }))),
  seo_keywords: Type.Optional(Nullable(Text({ maxLength: 1000 }))),
  ...publishingInput,
});

export const GalleryInput = Strict({
  images: Type.Array(
    Strict({
      image_url: RequiredText(),
      caption: Type.Optional(Nullable(Text({ maxLength: 1000 }))),
      display_order: Type.Optional(Type.Integer({ minimum: 0, maximum: 1_000_000 })),
      house_model: Type.Optional(Nullable(RequiredText())),
    }),
    { minItems: 1, maxItems: 50 },
  ),
});
export const GalleryCreated = Strict({ message: Type.String(), ids: Type.Array(Uuid()) });

// ── Lists and views ───────────────────────────────────────────────────────────────────────────────────────

export const projectList: ListSpec = {
  collection: 'projects',
  table: projects,
  id: projects.id,
  sortable: { created_at: projects.created_at, name: projects.name, publish_date: projects.publish_date, updated_at: projects.updated_at },
  defaultSort: 'created_at',
  filters: {
    status: { schema: StringEnum(PROJECT_STATUSES), where: (v) => eq(projects.status, v) },
    type: { schema: StringEnum(PROJECT_TYPES), where: (v) => eq(projects.type, v) },
  },
  search: [projects.name, projects.location],
};

const listColumns = {
  id: projects.id, name: projects.name, slug: projects.slug, status: projects.status, type: projects.type, stage: projects.stage,
  location: projects.location, price_range: projects.price_range, cover_photo: projects.cover_photo, published: projects.published,
  publish_date: projects.publish_date, created_at: projects.created_at, updated_at: projects.updated_at,
};

export const projectListView: View = { fields: listColumns };

/** Every column of a project; `galleries` come from {@link galleriesOf}. */
export const projectDetailView: View = {
  fields: {
    ...listColumns,
    description: projects.description, coordinates: projects.coordinates, nearby_landmarks: projects.nearby_landmarks,
    amenities: projects.amenities, seo_title: projects.seo_title, seo_description: projects.seo_description, seo_keywords: projects.seo_keywords,
  },
};

export const galleryView: View = {
  fields: {
    id: galleryImages.id, image_url: galleryImages.image_url, caption: galleryImages.caption,
    display_order: galleryImages.display_order, house_model: galleryImages.house_model,
  },
};

/** A project's gallery, ordered by display_order (ties: oldest first). */
export function galleriesOf(db: Executor, projectId: string) {
  return db.select(galleryView.fields).from(galleryImages).where(eq(galleryImages.project_id, projectId))
    .orderBy(asc(galleryImages.display_order), asc(galleryImages.id));
}

/** A project in its detail view with galleries, or 404. */
export async function projectDetail(db: Executor, id: string) {
  const project = await findOne<Record<string, any>>(db, projectCollection, projectDetailView, id);
  return { ...project, galleries: await galleriesOf(db, id) };
}

// ── Routes ────────────────────────────────────────────────────────────────────────────────────────────────

export default async function projectRoutes(app: App) {
  registerContentRoutes(app, {
    path: '/api/cms/projects',
    collection: projectCollection,
    list: projectList,
    listView: projectListView,
    ListItem: ProjectListItem,
    Detail: ProjectDetail,
    detail: projectDetail,
    Input: ProjectInput,
    validate: (body) => assertRange(body, 'price_range'),
    deleteCheck: async (current, tx) => {
      const [unit] = await tx.select({ id: inventoryUnits.id }).from(inventoryUnits).where(eq(inventoryUnits.project_id, current.id)).limit(1);
      if (unit) throw conflict('The project has inventory units; delete or move them first');
    },
  });

  app.post('/api/cms/projects/:id/galleries', {
    schema: { summary: "Add images to a project's gallery", params: IdParams, body: GalleryInput, response: { 201: GalleryCreated, ...errorResponses } },
  }, async (request, reply) => {
    const projectId = request.params.id;
    const ids = await auditedTransaction(app, request, async (tx, audit) => {
      await lockRow(tx, projectCollection, projectId);
      const rows = await tx.insert(galleryImages).values(request.body.images.map((image) => ({ ...image, project_id: projectId }))).returning();
      for (const row of rows) await audit(tx, { action: 'create', module: 'cms', resource: 'galleries', resourceId: row.id, after: row });
      return rows.map((row) => row.id);
    });
    return reply.code(201).send({ message: `${ids.length} gallery image${ids.length === 1 ? '' : 's'} added`, ids });
  });

  app.delete('/api/cms/projects/galleries/:id', {
    schema: { summary: 'Delete a gallery image', params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, galleryCollection, request.params.id);
    return { message: 'Gallery image deleted' };
  });
}

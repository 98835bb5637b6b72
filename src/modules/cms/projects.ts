import { Type } from '@sinclair/typebox';
import { asc, eq } from 'drizzle-orm';
import type { App } from '../../types.js';
import { anyOf, equals } from '../../data/filters.js';
import { audited } from '../../data/mutations.js';
import { defineResource } from '../../data/resource.js';
import type { Executor } from '../../db/client.js';
import { galleryImages, inventoryUnits, PROJECT_STATUSES, PROJECT_TYPES, projects } from '../../db/schema/index.js';
import { conflict } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { resourceRoutes } from '../../http/resource-routes.js';
import { errorResponses, IdParams, ImageVariantsOf, Money, Nullable, RequiredText, Strict, StringEnum, Text, Timestamp, Uuid } from '../../http/schemas.js';
import { assertRange, contentRoutes, type Publishing, publishingInput, SlugInput } from './content.js';

const listColumns = {
  id: projects.id, name: projects.name, slug: projects.slug, status: projects.status, type: projects.type, stage: projects.stage,
  location: projects.location, price_range: projects.price_range, cover_photo: projects.cover_photo, published: projects.published,
  publish_date: projects.publish_date, created_at: projects.created_at, updated_at: projects.updated_at,
};

/** Projects: developments with their details, gallery and publication on the website. */
export const projectResource = defineResource({
  name: 'projects',
  module: 'cms',
  label: 'Project',
  table: projects,
  id: projects.id,
  // Every column; `galleries` come from {@link galleriesOf}.
  view: {
    fields: {
      ...listColumns,
      description: projects.description, coordinates: projects.coordinates, nearby_landmarks: projects.nearby_landmarks,
      amenities: projects.amenities, seo_title: projects.seo_title, seo_description: projects.seo_description, seo_keywords: projects.seo_keywords,
    },
  },
  listView: { fields: listColumns },
  list: {
    sortable: { created_at: projects.created_at, name: projects.name, publish_date: projects.publish_date, updated_at: projects.updated_at },
    defaultSort: 'created_at',
    filters: {
      status: anyOf(projects.status, StringEnum(PROJECT_STATUSES)),
      type: anyOf(projects.type, StringEnum(PROJECT_TYPES)),
      published: equals(projects.published, Type.Boolean()),
    },
    search: [projects.name, projects.location],
  },
  images: { cover_photo: 'cover_photo_variants', galleries: { image_url: 'image' } },
});

export const projectPublishing: Publishing = { slug: projects.slug, published: projects.published, publishDate: projects.publish_date, slugSource: 'name' };

const galleryFields = {
  id: galleryImages.id, image_url: galleryImages.image_url, caption: galleryImages.caption,
  display_order: galleryImages.display_order, house_model: galleryImages.house_model,
};

/** A project's gallery images; created through their project, deleted one by one. */
export const galleryResource = defineResource({
  name: 'galleries',
  module: 'cms',
  label: 'Gallery image',
  table: galleryImages,
  id: galleryImages.id,
  view: { fields: galleryFields },
});

// ── Schemas ───────────────────────────────────────────────────────────────────────────────────────────────

export const Coordinates = Strict({ lat: Type.Number({ minimum: -90, maximum: 90 }), lng: Type.Number({ minimum: -180, maximum: 180 }) });
export const Landmark = Strict({ name: RequiredText(), distance: RequiredText() });
export const PriceRange = Strict({ min: Money(), max: Money() });

export const GalleryImage = Strict({
  id: Uuid(),
  image_url: Type.String(),
  image: ImageVariantsOf(),
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
  cover_photo_variants: ImageVariantsOf(),
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
export const GalleryCreated = Strict({ message: Type.String(), ids: Type.Array(Uuid()) }, { examples: [{ message: '2 gallery images added', ids: ['0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d', '0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0e'] }] });

// ── Reads ─────────────────────────────────────────────────────────────────────────────────────────────────

/** A project's gallery, ordered by display_order (ties: oldest first). */
export function galleriesOf(db: Executor, projectId: string) {
  return db.select(galleryFields).from(galleryImages).where(eq(galleryImages.project_id, projectId))
    .orderBy(asc(galleryImages.display_order), asc(galleryImages.id));
}

/** A project with its galleries. */
export const withGalleries = async (db: Executor, project: Record<string, unknown>) => ({ ...project, galleries: await galleriesOf(db, String(project.id)) });

// ── Routes ────────────────────────────────────────────────────────────────────────────────────────────────

export default async function projectRoutes(app: App) {
  const { db } = app.database;
  contentRoutes(app, projectResource, projectPublishing, {
    path: '/api/cms/projects',
    Item: ProjectDetail,
    ListItem: ProjectListItem,
    Input: ProjectInput,
    validate: (body) => assertRange(body.price_range, 'price_range'),
    complete: (project) => withGalleries(db, project),
    remove: {
      before: async (current, work) => {
        const [unit] = await work.tx.select({ id: inventoryUnits.id }).from(inventoryUnits).where(eq(inventoryUnits.project_id, current.id)).limit(1);
        if (unit) throw conflict('The project has inventory units; delete or move them first');
        // The gallery goes with its project, each image with its own log.
        await work.removeAll(galleryResource, eq(galleryImages.project_id, current.id));
      },
    },
  });

  app.post('/api/cms/projects/:id/galleries', {
    schema: { summary: "Add images to a project's gallery", params: IdParams, body: GalleryInput, response: { 201: GalleryCreated, ...errorResponses } },
  }, async (request, reply) => {
    const projectId = request.params.id;
    const ids = await audited(db, await actorOf(app, request), async (work) => {
      await work.lock(projectResource, projectId);
      const rows = [];
      for (const image of request.body.images) rows.push(await work.create(galleryResource, { ...image, project_id: projectId }));
      return rows.map((row) => row.id);
    });
    return reply.code(201).send({ message: `${ids.length} gallery image${ids.length === 1 ? '' : 's'} added`, ids });
  });

  resourceRoutes(app, galleryResource, { path: '/api/cms/projects/galleries', Item: GalleryImage, detail: false });
}

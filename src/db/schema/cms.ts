import { sql } from 'drizzle-orm';
import { boolean, type ExtraConfigColumn, index, integer, jsonb, pgTable, text, uniqueIndex, uuid } from 'drizzle-orm/pg-core';
import { createdAt, id, ts, updatedAt } from './common.js';
import { users } from './iam.js';

export const PROJECT_STATUSES = ['active', 'upcoming', 'completed', 'on-hold'] as const;
export const PROJECT_TYPES = ['residential', 'commercial', 'mixed-use'] as const;
export const ARTICLE_TYPES = ['news', 'announcement', 'blog'] as const;
export const EMPLOYMENT_TYPES = ['full-time', 'part-time', 'contract'] as const;

export type Coordinates = { lat: number; lng: number };
export type Landmark = { name: string; distance: string };
export type PriceRange = { min: number; max: number };
export type SalaryRange = { min: number; max: number; currency: string };

/** Indexes every published-content table shares: newest first, and what the public site reads. */
const contentIndexes = (name: string, t: { created_at: ExtraConfigColumn; id: ExtraConfigColumn; published: ExtraConfigColumn; publish_date: ExtraConfigColumn }) => [
  index(`${name}_created_idx`).on(t.created_at, t.id),
  index(`${name}_public_idx`).on(t.publish_date, t.id).where(sql`${t.published}`),
];

export const projects = pgTable('projects', {
  id: id(),
  name: text('name').notNull(),
  slug: text('slug').notNull(),
  description: text('description'),
  status: text('status', { enum: PROJECT_STATUSES }).notNull(),
  type: text('type', { enum: PROJECT_TYPES }).notNull(),
  stage: text('stage'),
  location: text('location'),
  coordinates: jsonb('coordinates').$type<Coordinates>(),
  nearby_landmarks: jsonb('nearby_landmarks').$type<Landmark[]>().notNull().default([]),
  amenities: jsonb('amenities').$type<string[]>().notNull().default([]),
  price_range: jsonb('price_range').$type<PriceRange>(),
  cover_photo: text('cover_photo'),
  seo_title: text('seo_title'),
  seo_description: text('seo_description'),
  seo_keywords: text('seo_keywords'),
  published: boolean('published').notNull().default(false),
  publish_date: ts('publish_date'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('projects_slug_key').on(t.slug),
  index('projects_status_idx').on(t.status, t.created_at, t.id),
  index('projects_type_idx').on(t.type, t.created_at, t.id),
  index('projects_name_idx').on(t.name, t.id),
  ...contentIndexes('projects', t),
]);

export const galleryImages = pgTable('gallery_images', {
  id: id(),
  project_id: uuid('project_id').notNull().references(() => projects.id, { onDelete: 'cascade' }),
  image_url: text('image_url').notNull(),
  caption: text('caption'),
  display_order: integer('display_order').notNull().default(0),
  house_model: text('house_model'),
  created_at: createdAt(),
}, (t) => [index('gallery_images_project_idx').on(t.project_id, t.display_order, t.id)]);

export const articles = pgTable('articles', {
  id: id(),
  title: text('title').notNull(),
  slug: text('slug').notNull(),
  content: text('content').notNull(),
  excerpt: text('excerpt'),
  type: text('type', { enum: ARTICLE_TYPES }).notNull(),
  cover_image: text('cover_image'),
  author_id: uuid('author_id').references(() => users.id),
  tags: text('tags').array().notNull().default(sql`'{}'::text[]`),
  published: boolean('published').notNull().default(false),
  publish_date: ts('publish_date'),
  seo_title: text('seo_title'),
  seo_description: text('seo_description'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('articles_slug_key').on(t.slug),
  index('articles_type_idx').on(t.type, t.created_at, t.id),
  index('articles_tags_idx').using('gin', t.tags),
  ...contentIndexes('articles', t),
]);

export const careers = pgTable('careers', {
  id: id(),
  title: text('title').notNull(),
  slug: text('slug').notNull(),
  department: text('department').notNull(),
  location: text('location').notNull(),
  employment_type: text('employment_type', { enum: EMPLOYMENT_TYPES }).notNull(),
  description: text('description'),
  salary_range: jsonb('salary_range').$type<SalaryRange>(),
  published: boolean('published').notNull().default(false),
  publish_date: ts('publish_date'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [
  uniqueIndex('careers_slug_key').on(t.slug),
  index('careers_department_idx').on(t.department, t.created_at, t.id),
  index('careers_employment_type_idx').on(t.employment_type, t.created_at, t.id),
  ...contentIndexes('careers', t),
]);

export const amenities = pgTable('amenities', {
  id: id(),
  name: text('name').notNull(),
  description: text('description'),
  icon: text('icon'),
  category: text('category'),
  cover_photo: text('cover_photo'),
  created_at: createdAt(),
  updated_at: updatedAt(),
}, (t) => [index('amenities_name_idx').on(t.name, t.id)]);

/** A smaller copy of an uploaded image: WebP, this wide. */
export type UploadVariant = { width: number; height: number; name: string; bytes: number };

/** Every uploaded file: its stored name (random), what it is, and the variants made of it. */
export const uploads = pgTable('uploads', {
  id: id(),
  name: text('name').notNull(),
  type: text('type').notNull(),
  bytes: integer('bytes').notNull(),
  width: integer('width').notNull(),
  height: integer('height').notNull(),
  variants: jsonb('variants').$type<UploadVariant[]>().notNull().default([]),
  created_by: uuid('created_by').references(() => users.id, { onDelete: 'set null' }),
  created_at: createdAt(),
}, (t) => [
  uniqueIndex('uploads_name_key').on(t.name),
  index('uploads_created_idx').on(t.created_at, t.id),
]);

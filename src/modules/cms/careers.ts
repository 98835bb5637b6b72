import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../app.js';
import type { Executor } from '../../db/client.js';
import { careers, EMPLOYMENT_TYPES } from '../../db/schema/index.js';
import { findOne } from '../../http/crud.js';
import type { ListSpec, View } from '../../http/list.js';
import { Nullable, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { assertRange, type ContentCollection, publishingInput, registerContentRoutes, SlugInput } from './content.js';

export const careerCollection: ContentCollection = {
  table: careers, id: careers.id, module: 'cms', resource: 'careers', label: 'Career', slug: careers.slug, slugSource: 'title',
};

// ── Schemas ───────────────────────────────────────────────────────────────────────────────────────────────

export const SalaryRange = Strict({
  min: Type.Number({ minimum: 0 }),
  max: Type.Number({ minimum: 0 }),
  currency: Type.String({ minLength: 1, maxLength: 10 }),
});

const listFields = {
  id: Uuid(),
  title: Type.String(),
  slug: Type.String(),
  department: Type.String(),
  location: Type.String(),
  employment_type: StringEnum(EMPLOYMENT_TYPES),
  salary_range: Nullable(SalaryRange),
  published: Type.Boolean(),
  publish_date: Nullable(Timestamp()),
  created_at: Timestamp(),
};

/** A job posting in lists: SPEC.md's fields, without the description. */
export const CareerListItem = Strict(listFields);

export const CareerDetail = Strict({ ...listFields, description: Nullable(Type.String()), updated_at: Timestamp() });

export const CareerInput = Strict({
  title: RequiredText(),
  slug: Type.Optional(SlugInput()),
  department: RequiredText(),
  location: RequiredText(),
  employment_type: StringEnum(EMPLOYMENT_TYPES),
  description: Type.Optional(Nullable(Type.String({ maxLength: 50_000 }))),
  salary_range: Type.Optional(Nullable(SalaryRange)),
  ...publishingInput,
});

// ── Lists and views ───────────────────────────────────────────────────────────────────────────────────────

export const careerList: ListSpec = {
  collection: 'careers',
  table: careers,
  id: careers.id,
  sortable: { created_at: careers.created_at, title: careers.title, publish_date: careers.publish_date },
  defaultSort: 'created_at',
  filters: {
    department: { schema: Type.String({ minLength: 1, maxLength: 200 }), where: (v) => eq(careers.department, v) },
    employment_type: { schema: StringEnum(EMPLOYMENT_TYPES), where: (v) => eq(careers.employment_type, v) },
    published: { schema: Type.Boolean(), where: (v) => eq(careers.published, v) },
  },
  search: [careers.title, careers.department],
};

const listColumns = {
  id: careers.id, title: careers.title, slug: careers.slug, department: careers.department, location: careers.location,
  employment_type: careers.employment_type, salary_range: careers.salary_range, published: careers.published,
  publish_date: careers.publish_date, created_at: careers.created_at,
};

export const careerListView: View = { fields: listColumns };
export const careerDetailView: View = { fields: { ...listColumns, description: careers.description, updated_at: careers.updated_at } };

/** A job posting in its detail view, or 404. */
export function careerDetail(db: Executor, id: string) {
  return findOne<Record<string, any>>(db, careerCollection, careerDetailView, id);
}

// ── Routes ────────────────────────────────────────────────────────────────────────────────────────────────

export default async function careerRoutes(app: App) {
  registerContentRoutes(app, {
    path: '/api/cms/careers',
    collection: careerCollection,
    list: careerList,
    listView: careerListView,
    ListItem: CareerListItem,
    Detail: CareerDetail,
    detail: careerDetail,
    Input: CareerInput,
    validate: (body) => assertRange(body, 'salary_range'),
  });
}

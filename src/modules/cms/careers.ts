import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { anyOf, equals } from '../../data/filters.js';
import { defineResource } from '../../data/resource.js';
import { careers, EMPLOYMENT_TYPES } from '../../db/schema/index.js';
import { Money, Nullable, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../http/schemas.js';
import { assertRange, contentRoutes, type Publishing, publishingInput, SlugInput } from './content.js';

const listColumns = {
  id: careers.id, title: careers.title, slug: careers.slug, department: careers.department, location: careers.location,
  employment_type: careers.employment_type, salary_range: careers.salary_range, published: careers.published,
  publish_date: careers.publish_date, created_at: careers.created_at,
};

/** Careers: job postings; lists leave the description out. */
export const careerResource = defineResource({
  name: 'careers',
  module: 'cms',
  label: 'Career',
  table: careers,
  id: careers.id,
  view: { fields: { ...listColumns, description: careers.description, updated_at: careers.updated_at } },
  listView: { fields: listColumns },
  list: {
    sortable: { created_at: careers.created_at, title: careers.title, publish_date: careers.publish_date },
    defaultSort: 'created_at',
    filters: {
      department: equals(careers.department, Type.String({ minLength: 1, maxLength: 200 })),
      employment_type: anyOf(careers.employment_type, StringEnum(EMPLOYMENT_TYPES)),
      published: equals(careers.published, Type.Boolean()),
    },
    search: [careers.title, careers.department],
  },
});

export const careerPublishing: Publishing = { slug: careers.slug, published: careers.published, publishDate: careers.publish_date, slugSource: 'title' };

// ── Schemas ───────────────────────────────────────────────────────────────────────────────────────────────

export const SalaryRange = Strict({
  min: Money(),
  max: Money(),
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

// ── Routes ────────────────────────────────────────────────────────────────────────────────────────────────

export default async function careerRoutes(app: App) {
  contentRoutes(app, careerResource, careerPublishing, {
    path: '/api/cms/careers',
    Item: CareerDetail,
    ListItem: CareerListItem,
    Input: CareerInput,
    validate: (body) => assertRange(body.salary_range, 'salary_range'),
  });
}

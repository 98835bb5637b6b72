import { type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { PgColumn } from 'drizzle-orm/pg-core';
import type { FastifyRequest } from 'fastify';
import type { App } from '../../app.js';
import type { Executor, Tx } from '../../db/client.js';
import { type Collection, createRecord, deleteRecord, updateRecord } from '../../http/crud.js';
import { databaseError, PG_UNIQUE_VIOLATION, validationError } from '../../http/errors.js';
import { type ListQuery, listQuerySchema, type ListSpec, type View } from '../../http/list.js';
import { Created, errorResponses, IdParams, Message, Nullable, Paginated, PartialStrict, TimestampInput } from '../../http/schemas.js';
import { assertSlugFree, SLUG_PATTERN, slugify, uniqueSlug } from './slug.js';

/**
 * What the published-content resources (projects, articles, careers) share: a slug derived from a title unless
 * one is sent (CONTRACT §2, §12), a publish date set when published without one, and the same five routes.
 */
export type ContentCollection = Collection & {
  slug: PgColumn;
  /** The body field a missing slug is derived from: `name` or `title`. */
  slugSource: string;
};

type Row = Record<string, any>;

/** 400 `details['<field>.min']` when a range's min is above its max. */
export function assertRange(body: Row, field: string) {
  const range = body[field];
  if (range && typeof range.min === 'number' && typeof range.max === 'number' && range.min > range.max) {
    throw validationError({ [`${field}.min`]: `must be less than or equal to ${field}.max` });
  }
}

const toDate = (value: unknown) => (typeof value === 'string' ? new Date(value) : value);

/** Insert values: the slug (checked when sent, else derived and made unique) and the publish date. */
export async function createValues(db: Executor, c: ContentCollection, body: Row): Promise<Row> {
  const values: Row = { ...body };
  if (values.publish_date !== undefined) values.publish_date = toDate(values.publish_date);
  if (values.published && values.publish_date == null) values.publish_date = new Date();
  if (values.slug !== undefined) await assertSlugFree(db, c.table, c.slug, c.id, values.slug);
  else values.slug = await uniqueSlug(db, c.table, c.slug, slugify(String(body[c.slugSource] ?? '')), c.resource.replace(/s$/, ''));
  return values;
}

/** Update values: only the fields sent, plus a publish date when the record becomes published without one. */
export function patchValues(current: Row, body: Row): Row {
  const values: Row = { ...body };
  if (values.publish_date !== undefined) values.publish_date = toDate(values.publish_date);
  const published = values.published ?? current.published;
  const publishDate = values.publish_date === undefined ? current.publish_date : values.publish_date;
  if (published && publishDate == null) values.publish_date = new Date();
  return values;
}

export type ContentRoutes = {
  /** Collection path, e.g. `/api/cms/projects`. */
  path: string;
  collection: ContentCollection;
  list: ListSpec;
  listView: View;
  ListItem: TSchema;
  Detail: TSchema;
  /** Reads one record in its detail view (404 when missing). */
  detail: (db: Executor, id: string) => Promise<Row>;
  /** Create body; PATCH takes any non-empty subset of it. */
  Input: TObject;
  /** Cross-field checks of a create or PATCH body (400), run before any lookup. */
  validate?: (body: Row) => void;
  /** Fields the server adds on create (author, excerpt, …). */
  createDefaults?: (request: FastifyRequest, body: Row) => Promise<Row> | Row;
  /** Refuses a delete (409) while other records depend on the record. */
  deleteCheck?: (current: Row, tx: Tx) => Promise<void>;
};

/** Registers list, detail, create, PATCH and DELETE of a content resource, all audited. */
export function registerContentRoutes(app: App, r: ContentRoutes) {
  const { collection: c } = r;
  const label = c.label;
  const plural = c.resource;

  app.get(r.path, {
    schema: { summary: `List ${plural} (list view)`, querystring: listQuerySchema(r.list), response: { 200: Paginated(r.ListItem), ...errorResponses } },
  }, async (request) => app.lists.page(r.list, r.listView, request.query as ListQuery));

  app.get(`${r.path}/:id`, {
    schema: { summary: `One ${label.toLowerCase()} (detail view)`, params: IdParams, response: { 200: r.Detail, ...errorResponses } },
  }, async (request) => r.detail(app.database.db, (request.params as { id: string }).id));

  app.post(r.path, {
    schema: { summary: `Create ${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label.toLowerCase()}`, body: r.Input, response: { 201: Created, ...errorResponses } },
  }, async (request, reply) => {
    const body = request.body as Row;
    r.validate?.(body);
    const defaults = (await r.createDefaults?.(request, body)) ?? {};
    // A derived slug taken by a concurrent create in the meantime: derive again (an explicit one stays a 409).
    for (let attempt = 1; ; attempt++) {
      const values = await createValues(app.database.db, c, { ...defaults, ...body });
      try {
        const row = await createRecord(app, request, c, values);
        return reply.code(201).send({ id: row.id, message: `${label} created` });
      } catch (err) {
        if (body.slug !== undefined || attempt >= 5 || databaseError(err)?.code !== PG_UNIQUE_VIOLATION) throw err;
      }
    }
  });

  app.patch(`${r.path}/:id`, {
    schema: { summary: `Update ${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label.toLowerCase()} (only the fields sent)`, params: IdParams, body: PartialStrict(r.Input), response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    const body = request.body as Row;
    r.validate?.(body);
    const id = (request.params as { id: string }).id;
    await updateRecord(app, request, c, id, (current) => patchValues(current, body), {
      check: async (_current, tx) => {
        if (body.slug !== undefined) await assertSlugFree(tx, c.table, c.slug, c.id, body.slug, id);
      },
    });
    return { message: `${label} updated` };
  });

  app.delete(`${r.path}/:id`, {
    schema: { summary: `Delete ${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label.toLowerCase()}`, params: IdParams, response: { 200: Message, ...errorResponses } },
  }, async (request) => {
    await deleteRecord(app, request, c, (request.params as { id: string }).id, { check: r.deleteCheck });
    return { message: `${label} deleted` };
  });
}

/** Fields every content body may carry. */
export const publishingInput = {
  published: Type.Optional(Type.Boolean()),
  publish_date: Type.Optional(Nullable(TimestampInput())),
};

/** An explicitly sent slug: lower-case ASCII words joined by '-'. */
export const SlugInput = () => Type.String({ minLength: 1, maxLength: 200, pattern: SLUG_PATTERN });

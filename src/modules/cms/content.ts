import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import { clock } from '../../clock.js';
import type { PgColumn, PgTable } from 'drizzle-orm/pg-core';
import type { App } from '../../types.js';
import { type Patch, Work } from '../../data/mutations.js';
import type { Resource, RowOf } from '../../data/resource.js';
import type { Tx } from '../../db/client.js';
import { databaseError, PG_UNIQUE_VIOLATION, validationError } from '../../errors.js';
import { type Context, type RemoveRoute, resourceRoutes } from '../../http/resource-routes.js';
import { Nullable, TimestampInput } from '../../http/schemas.js';
import { assertSlugFree, SLUG_PATTERN, slugify, uniqueSlug } from './slug.js';

/**
 * What the published-content resources (projects, articles, careers) share: a slug derived from a title unless
 * one is sent (CONTRACT §2, §12), and a publish date set when published without one.
 */
export type Publishing = { slug: PgColumn; published: PgColumn; publishDate: PgColumn; /** The body field a missing slug is derived from. */ slugSource: 'name' | 'title' };

type Row = Record<string, unknown>;

/** 400 `details['<field>.min']` when a range's min is above its max. */
export function assertRange(range: { min: number; max: number } | null | undefined, field: string) {
  if (range && range.min > range.max) throw validationError({ [`${field}.min`]: `must be less than or equal to ${field}.max` });
}

const toDate = (value: unknown) => (typeof value === 'string' ? new Date(value) : value);

/** Publish date as sent (text → Date), or now when the record is published without one. */
function publishing(values: Row, current: Row = {}): Row {
  const next: Row = { ...values };
  if (next.publish_date !== undefined) next.publish_date = toDate(next.publish_date);
  const published = next.published ?? current.published;
  const publishDate = next.publish_date === undefined ? current.publish_date : next.publish_date;
  if (published && publishDate == null) next.publish_date = clock.now();
  return next;
}

/**
 * Inserts a content record with its slug: a sent slug must be free (409); a derived one is made unique, and
 * derived again (in a savepoint) should a concurrent create take it in the meantime.
 */
async function insertWithSlug<T extends PgTable>(work: Work, resource: Resource<T>, p: Publishing, values: Row): Promise<RowOf<T>> {
  const explicit = typeof values.slug === 'string';
  for (let attempt = 1; ; attempt++) {
    try {
      return await work.tx.transaction(async (savepoint) => {
        const tx = savepoint as Tx;
        const slug = explicit
          ? await assertSlugFree(tx, resource.table, p.slug, resource.id, String(values.slug)).then(() => values.slug)
          : await uniqueSlug(tx, resource.table, p.slug, slugify(String(values[p.slugSource] ?? '')), resource.name.replace(/s$/, ''));
        return new Work(tx, work.actor).create(resource, { ...values, slug } as Patch<T>);
      });
    } catch (err) {
      if (explicit || attempt >= 5 || databaseError(err)?.code !== PG_UNIQUE_VIOLATION) throw err;
    }
  }
}

export type ContentRoutes<T extends PgTable, C extends TObject> = {
  path: string;
  Item: TSchema;
  ListItem: TSchema;
  /** Create body; PATCH takes any non-empty subset of it. */
  Input: C;
  /** Cross-field checks of a create or PATCH body (400), before any lookup. */
  validate?: (body: Partial<Static<C>>) => void;
  /** Fields the server adds on create (author, excerpt, …). */
  defaults?: (body: Static<C>, ctx: Context) => Row;
  complete?: (row: Row, ctx: Pick<Context, 'app'>) => Promise<Row>;
  remove?: RemoveRoute<T>;
};

/** The routes of a content resource: the common ones, with slugs and publishing. */
export function contentRoutes<T extends PgTable, C extends TObject>(app: App, resource: Resource<T>, p: Publishing, routes: ContentRoutes<T, C>) {
  resourceRoutes(app, resource, {
    path: routes.path,
    Item: routes.Item,
    ListItem: routes.ListItem,
    complete: routes.complete,
    create: {
      body: routes.Input,
      values: (body, ctx) => {
        routes.validate?.(body);
        return publishing({ ...routes.defaults?.(body, ctx), ...body }) as Patch<T>;
      },
      insert: (work, values) => insertWithSlug(work, resource, p, values as Row),
    },
    update: {
      validate: (body) => routes.validate?.(body as Partial<Static<C>>),
      // PATCH changes the slug only when one is sent (CONTRACT §12).
      values: async (body, current, work) => {
        const sent = body as Row;
        if (typeof sent.slug === 'string') await assertSlugFree(work.tx, resource.table, p.slug, resource.id, sent.slug, String((current as Row).id));
        return publishing(sent, current as Row) as Patch<T>;
      },
    },
    remove: routes.remove,
  });
}

/** Fields every content body may carry. */
export const publishingInput = {
  published: Type.Optional(Type.Boolean()),
  publish_date: Type.Optional(Nullable(TimestampInput())),
};

/** An explicitly sent slug: lower-case ASCII words joined by '-'. */
export const SlugInput = () => Type.String({ minLength: 1, maxLength: 200, pattern: SLUG_PATTERN });

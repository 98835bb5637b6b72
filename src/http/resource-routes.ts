import { type Static, type TObject, type TSchema, Type } from '@sinclair/typebox';
import type { SQL } from 'drizzle-orm';
import type { PgTable } from 'drizzle-orm/pg-core';
import type { FastifyReply } from 'fastify';
import type { App } from '../types.js';
import { recordScope } from '../auth/guard.js';
import type { Actor } from '../data/actor.js';
import { exportColumns, exportCsv } from '../data/export.js';
import { findOne, type ListQuery, type Page } from '../data/list.js';
import { audited, createAuditedUnless, type Patch, type Work } from '../data/mutations.js';
import type { Resource, RowOf } from '../data/resource.js';
import { ActivityLog, activityLogResource } from '../audit/activity-log.js';
import { withResourceImages } from '../media/library.js';
import { DryRun } from '../data/restore.js';
import { deleteIntoTrash, registerTrashable } from '../data/trash.js';
import { historyRestoreRoute, type RestoreOptions } from './restore-routes.js';
import { actorOf } from './actor.js';
import { historyWithoutHidden, readableColumns, requireReferences, type ScopeOf, walledQuery, withoutHidden } from './record-walls.js';
import { sendCsv } from './csv.js';
import { listQuerySchema } from './list-query.js';
import { named, pascal } from './openapi.js';
import { Created, errorResponses, IdParams, Message, Paginated, PartialStrict, Strict } from './schemas.js';

const ActivityLogPage = named('ActivityLogPage', Paginated(ActivityLog));

/**
 * What a hook knows of the call: who acts, the app's services, and the caller's record scope on any resource (for a
 * record the hook reads on the caller's behalf, as a reservation's lead found by e-mail). Never the request.
 */
export type Context = { app: App; actor: Actor; scopeOf: ScopeOf };
type Answer = { code?: number; body: unknown };
type Row<T extends PgTable> = RowOf<T>;
type Pagination = Page<unknown>['pagination'];

export type CreateRoute<T extends PgTable, C extends TObject> = {
  body: C;
  summary?: string;
  /** Checks and insert values, before the transaction (400 for a bad reference, say). Default: the body. */
  values?: (body: Static<C>, ctx: Context) => Promise<Patch<T>> | Patch<T>;
  /** Replaces the plain audited insert, in the transaction (a reservation locks its unit first). */
  insert?: (work: Work, values: Patch<T>, body: Static<C>) => Promise<Row<T>>;
  /** Whether this create needs `insert` (default: always); when not, the plain audited insert does (one statement). */
  needsInsert?: (values: Patch<T>, body: Static<C>) => Promise<boolean> | boolean;
  /**
   * When `needsInsert` said no: a condition under which `insert` is needed after all, checked by the plain insert's own
   * statement (nothing is written then, and `insert` runs): no round trip of its own, and no moment between the check and the write.
   */
  insertWhen?: SQL;
  /** After the commit: side effects that must not undo the change (mail). */
  committed?: (row: Row<T>, body: Static<C>, ctx: Context) => void;
  /** The answer; default 201 `{id, message: "<Label> created"}`. */
  answer?: { schema: Record<number, TSchema>; send?: (row: Row<T>) => Answer; /** Its `message` by status, for the document's examples. */ messages?: Record<number, string> };
  /** Replaces all of the above when creating is really something else (subscribing: 201, 200 or 409). */
  handle?: (body: Static<C>, ctx: Context) => Promise<Answer>;
};

export type UpdateRoute<T extends PgTable, U extends TObject, P = void> = {
  /** Default: any non-empty subset of the create body. */
  body?: U;
  summary?: string;
  /** Checks before the transaction (references named in the body); what it returns is handed to `change`. */
  validate?: (body: Static<U>, ctx: Context) => Promise<P> | P;
  /** Values to set, from the body and the locked current row; throw to refuse (409). Default: the body. */
  values?: (body: Static<U>, current: Row<T>, work: Work) => Promise<Patch<T>> | Patch<T>;
  /** Replaces the plain audited update (a unit's state has one owner that every change goes through). */
  change?: (work: Work, id: string, values: (current: Row<T>) => Promise<Patch<T>>, body: Static<U>, prepared: P) => Promise<Row<T>>;
  /** In the transaction after the update: related changes (a cancelled reservation frees its unit). */
  after?: (row: Row<T>, before: Row<T>, work: Work) => Promise<void>;
  /** After the commit: side effects that must not undo the change (mail); `before` is the row as it was. */
  committed?: (row: Row<T>, body: Static<U>, ctx: Context, before: Row<T>) => void;
};

export type RemoveRoute<T extends PgTable> = {
  summary?: string;
  /** Before the row goes, in the transaction: refuse (409) or change what depends on it. */
  before?: (current: Row<T>, work: Work) => Promise<void> | void;
  /** Replaces the plain audited delete (users are kept as tombstones). */
  remove?: (work: Work, id: string) => Promise<void>;
};

export type ResourceRoutes<T extends PgTable, C extends TObject, U extends TObject, P = void> = {
  /** Collection path: `/api/crm/leads`. */
  path: string;
  /** A record in answers (detail; lists too unless `ListItem`). */
  Item: TSchema;
  ListItem?: TSchema;
  /** Adds to a detail (a project's galleries, a campaign's delivery counts). */
  complete?: (row: Record<string, unknown>, ctx: Pick<Context, 'app'>) => Promise<Record<string, unknown>>;
  /** false: no `GET …/:id` (gallery images are read through their project). */
  detail?: false;
  create?: CreateRoute<T, C>;
  /** Default with `create`: PATCH takes any non-empty subset of the create body. false: no PATCH. */
  update?: UpdateRoute<T, U, P> | false;
  remove?: RemoveRoute<T> | false;
  /**
   * Parameters of the list and its export beyond the resource's filters, and the filters they stand for in one request
   * (`mine=true` → the caller's id, `due=today` → today's bounds): the list then caches what they stood for, never the
   * words. `hidden`: filters only `filters` sets (unknown parameters to clients).
   */
  listQuery?: { params: Record<string, TSchema>; hidden?: string[]; filters: (query: Record<string, unknown>, ctx: Context) => Record<string, unknown> };
};

/**
 * A request part the route's schema has validated. The type provider infers it for a concrete schema, not for the
 * generic one a factory holds, so the factory names it here, once.
 */
const validated = <S extends TSchema>(part: unknown) => part as Static<S>;

/**
 * A list page's answer as JSON, by the route's own serializer, kept by its rows: a kept page (the very same rows,
 * served again and again while nothing changes them) is written out once, not on every request (writing its rows,
 * their timestamps above all, was a third of what the service allocated serving a kept page). Kept rows are never
 * changed, and rows a caller may see only in part are a copy (`withoutHidden`), so the rows say what the text is.
 */
class PageJson {
  private written = new WeakMap<object, { pagination: Pagination; json: string }>();

  of(reply: FastifyReply, answer: { data: unknown[]; pagination: Pagination }): string {
    const { data, pagination } = answer;
    const kept = this.written.get(data);
    if (kept && kept.pagination.page === pagination.page && kept.pagination.limit === pagination.limit && kept.pagination.total === pagination.total
      && kept.pagination.totalPages === pagination.totalPages) return kept.json;
    const json = reply.getSerializationFunction('200')!(answer);
    this.written.set(data, { pagination, json });
    return json;
  }
}

const article = (label: string) => `${/^[aeiou]/i.test(label) ? 'an' : 'a'} ${label.toLowerCase()}`;

/**
 * The routes of a resource, all alike: list (with its CSV export when declared), detail, create, PATCH and DELETE,
 * every change audited in its transaction. The resource file says only what is its own, through the hooks.
 */
export function resourceRoutes<T extends PgTable, C extends TObject = TObject, U extends TObject = C, P = void>(app: App, resource: Resource<T>, routes: ResourceRoutes<T, C, U, P>) {
  const { path } = routes;
  const { label } = resource;
  const db = app.database.db;
  const scopesOf = (request: Parameters<typeof actorOf>[1]): ScopeOf => (target) => recordScope(app, request, target);
  const context = async (request: Parameters<typeof actorOf>[1]): Promise<Context> => ({ app, actor: await actorOf(app, request), scopeOf: scopesOf(request) });
  const plural = resource.name.replace(/_/g, ' ');
  // Named once here for the OpenAPI document: `Lead`, `LeadPage`, `LeadCreate`…; operations `listLeads`, `getLead`…
  const Name = pascal(label);
  const Plural = pascal(plural);
  named(Name, routes.Item);
  if (routes.ListItem && routes.ListItem !== routes.Item) named(`${Name}Summary`, routes.ListItem);
  const listParams = { hiddenFilters: routes.listQuery?.hidden, params: routes.listQuery?.params };
  const listQueryOf = async (request: Parameters<typeof actorOf>[1]) => {
    const query = validated<TObject>(request.query) as Record<string, unknown>;
    const filters = routes.listQuery ? routes.listQuery.filters(query, await context(request)) : query;
    return walledQuery(db, resource, filters, scopesOf(request));
  };
  const images = <R extends Record<string, unknown>>(rows: R[]) => withResourceImages(db, app.config.baseUrl, resource, rows);

  if (resource.list?.whole) {
    app.get(path, {
      schema: {
        operationId: `list${Plural}`, summary: `All ${plural}, ordered by ${resource.list.defaultSort}`, querystring: Strict({}),
        response: { 200: named(`${Name}List`, Strict({ data: Type.Array(routes.ListItem ?? routes.Item) })), ...errorResponses },
      },
    }, async () => {
      const { data } = await app.lists.whole(resource);
      return { data: await images(data as Record<string, unknown>[]) };
    });
  } else if (resource.list) {
    const pageJson = new PageJson();
    app.get(path, {
      schema: {
        operationId: `list${Plural}`, summary: `List ${plural}`, querystring: listQuerySchema(resource, listParams),
        response: { 200: named(`${Name}Page`, Paginated(routes.ListItem ?? routes.Item)), ...errorResponses },
      },
    }, async (request, reply) => {
      const page = await app.lists.page(resource, await listQueryOf(request), await recordScope(app, request, resource));
      const answer = { data: await images(await withoutHidden(db, resource, page.data, scopesOf(request))), pagination: page.pagination };
      const json = pageJson.of(reply, answer);
      reply.serializer(() => json);
      return answer;
    });
  }

  if (resource.export) {
    const columns = exportColumns(resource.listView ?? resource.view, resource.export.json);
    const headers = columns.map((column) => column.header);
    const filename = resource.name.replace(/_/g, '-');
    app.get(`${path}/export`, {
      schema: {
        operationId: `export${Plural}`,
        summary: `Export ${plural} as CSV (list filters, q and sort apply)`,
        querystring: listQuerySchema(resource, { paging: false, ...listParams }),
        response: {
          200: { description: 'CSV file with a header row', content: { 'text/csv': { schema: { type: 'string' }, example: `${headers.join(',')}\r\n` } } },
          ...errorResponses,
        },
      },
    }, async (request, reply) => {
      const only = await readableColumns(resource, columns, scopesOf(request));
      const shown = only.size ? columns.map((column) => ({ ...column, only: only.get(column.header) })) : columns;
      return sendCsv(reply, filename, headers, exportCsv(db, resource, shown, await listQueryOf(request), { ...await recordScope(app, request, resource), copyBinary: app.database.copyBinary }));
    });
  }

  if (routes.detail !== false && resource.name !== activityLogResource.name) {
    const HistoryQuery = Strict({
      page: Type.Optional(Type.Integer({ minimum: 1, maximum: 1_000_000, default: 1 })),
      limit: Type.Optional(Type.Integer({ minimum: 1, maximum: 100, default: 20 })),
    });
    app.get(`${path}/:id/history`, {
      schema: {
        operationId: `get${Name}History`,
        summary: `One ${label.toLowerCase()}'s history`,
        description: `Every audited change of the ${label.toLowerCase()}, newest first, with the fields before and after; kept as long as `
          + 'activity logs are (a deleted record keeps its history). Needs read permission on this module only.',
        params: IdParams, querystring: HistoryQuery, response: { 200: ActivityLogPage, ...errorResponses },
      },
    }, async (request) => {
      const { page, limit } = validated<typeof HistoryQuery>(request.query);
      // A caller with a record scope reads the history of a record they can see now (not of a deleted one).
      const visible = await recordScope(app, request, resource);
      if (visible.scope) await findOne(db, resource, request.params.id, visible);
      const history = await app.lists.page<Static<typeof ActivityLog>>(activityLogResource, { resource: resource.name, resource_id: request.params.id, page, limit });
      // No trace at all: the record never existed (or its history has been purged with it).
      if (history.pagination.total === 0) await findOne(db, resource, request.params.id);
      return { ...history, data: await historyWithoutHidden(db, resource, history.data, scopesOf(request)) };
    });
  }

  if (routes.detail !== false) app.get(`${path}/:id`, {
    schema: { operationId: `get${Name}`, summary: `One ${label.toLowerCase()}`, params: IdParams, response: { 200: routes.Item, ...errorResponses } },
  }, async (request) => {
    const row = await findOne<Record<string, unknown>>(db, resource, request.params.id, await recordScope(app, request, resource));
    const [shown] = await withoutHidden(db, resource, [row], scopesOf(request));
    const [answer] = await images([routes.complete ? await routes.complete(shown, { app }) : shown]);
    return answer;
  });

  const create = routes.create;
  if (create) {
    const insert = async (body: Static<C>, ctx: Context) => {
      await requireReferences(db, resource, body as Record<string, unknown>, ctx.scopeOf);
      const values = create.values ? await create.values(body, ctx) : (body as Patch<T>);
      const plain = !create.insert || (create.needsInsert ? !(await create.needsInsert(values, body)) : false);
      const row = (plain ? await createAuditedUnless(db, ctx.actor, resource, values, { unless: create.insert && create.insertWhen }) : undefined)
        ?? await audited(db, ctx.actor, (work) => create.insert!(work, values, body));
      create.committed?.(row, body, ctx);
      return row;
    };
    const schema = create.answer?.schema ?? { 201: Created };
    const send = create.answer?.send ?? ((row: Row<T>) => ({ code: 201, body: { id: (row as { id: string }).id, message: `${label} created` } }));
    app.post(path, {
      schema: {
        operationId: `create${Name}`, summary: create.summary ?? `Create ${article(label)}`, body: named(`${Name}Create`, create.body), response: { ...schema, ...errorResponses },
        'x-answer-message': create.answer ? create.answer.messages : `${label} created`,
      },
    }, async (request, reply) => {
      const body = validated<C>(request.body);
      const ctx = await context(request);
      const { code = 200, body: sent } = create.handle ? await create.handle(body, ctx) : send(await insert(body, ctx));
      // Serialised (and checked) by the answer's own response schema.
      return reply.code(code).send(sent as never);
    });
  }

  const update = routes.update === false ? undefined : (routes.update ?? (create ? {} : undefined));
  if (update) {
    const schema = update.body ?? (create ? PartialStrict(create.body) : undefined);
    if (!schema) throw new Error(`${resource.name}: PATCH needs a body schema`);
    app.patch(`${path}/:id`, {
      schema: {
        operationId: `update${Name}`, summary: update.summary ?? `Update ${article(label)} (only the fields sent)`, params: IdParams,
        body: named(`${Name}Update`, schema), response: { 200: Message, ...errorResponses }, 'x-answer-message': `${label} updated`,
      },
    }, async (request) => {
      await change(request, request.params.id, validated<U>(request.body));
      return { message: `${label} updated` };
    });
    /** The update as PATCH makes it; a restore from the record's history makes it the same way. */
    const change = async (request: Parameters<typeof actorOf>[1], id: string, body: Static<U>, restore?: RestoreOptions) => {
      const ctx = await context(request);
      await requireReferences(db, resource, body as Record<string, unknown>, ctx.scopeOf);
      const prepared = (await update.validate?.(body, ctx)) as P;
      const visible = await recordScope(app, request, resource);
      let before: Row<T> | undefined;
      let logged: unknown;
      const run = () => audited(db, ctx.actor, async (work) => {
        if (visible.scope) work.visible.set(resource.name, visible.scope);
        if (restore) Object.assign(work, { restoredFrom: restore.from, trail: [] });
        const values = async (current: Row<T>) => {
          before = current;
          return update.values ? update.values(body, current, work) : (body as Patch<T>);
        };
        const row = await (update.change ? update.change(work, id, values, body, prepared) : work.update(resource, id, values));
        await update.after?.(row, before!, work);
        // What the restore changed: the record's own activity log, as written (none when nothing changed).
        logged = work.trail?.find(({ log }) => log.resource === resource.name && log.resource_id === id)?.log.changes;
        if (restore?.dryRun) throw new DryRun(row);
        return row;
      });
      const { row, tried } = await run().then((done) => ({ row: done, tried: false }), (err: unknown) => {
        if (err instanceof DryRun) return { row: err.row as Row<T>, tried: true };
        throw err;
      });
      if (!tried) update.committed?.(row, body, ctx, before!);
      return { row, changes: logged };
    };
    if (routes.detail !== false) historyRestoreRoute(app, resource, path, schema, change);
  }

  const remove = routes.remove;
  if (remove !== false) {
    registerTrashable(resource);
    app.delete(`${path}/:id`, {
      schema: {
        operationId: `delete${Name}`, summary: remove?.summary ?? `Delete ${article(label)}`, params: IdParams, response: { 200: Message, ...errorResponses },
        'x-answer-message': `${label} deleted`,
      },
    }, async (request) => {
      const ctx = await context(request);
      const visible = await recordScope(app, request, resource);
      await audited(db, ctx.actor, async (work) => {
        if (visible.scope) work.visible.set(resource.name, visible.scope);
        // A cms or crm record goes to the trash, with what is deleted and changed with it.
        await deleteIntoTrash(work, resource, request.params.id, async () => {
          if (remove?.remove) return remove.remove(work, request.params.id);
          await work.remove(resource, request.params.id, remove?.before && ((current) => remove.before!(current, work)));
        });
      });
      return { message: `${label} deleted` };
    });
  }
}

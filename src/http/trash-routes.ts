import { Type } from '@sinclair/typebox';
import { eq, sql } from 'drizzle-orm';
import type { App } from '../types.js';
import { ownersOf } from '../auth/guard.js';
import { clock } from '../clock.js';
import { allOf, anyOf, equals, is } from '../data/filters.js';
import type { ScopeOption } from '../data/list.js';
import { audited } from '../data/mutations.js';
import type { Resource } from '../data/resource.js';
import { restoreFromTrash, trashableResources, trashOwnedBy } from '../data/trash.js';
import { type ModuleName, trash, users } from '../db/schema/index.js';
import { campaignScheduled } from '../modules/crm/delivery.js';
import { actorOf } from './actor.js';
import { listQuerySchema } from './list-query.js';
import { named } from './openapi.js';
import { errorResponses, Nullable, Paginated, Strict, StringEnum, Timestamp, Uuid } from './schemas.js';

/**
 * The trash of a module: `GET /api/<module>/trash` lists its deleted records (newest first; by resource, who
 * and when), `POST /api/<module>/trash/:log_id/restore` recreates one. Both need the module's delete permission.
 */

const TrashEntry = named('TrashEntry', Strict({
  id: Uuid({ description: 'The trash entry: the id of the delete\'s activity log (the `log_id` of the restore path)' }),
  resource: Type.String({ description: 'The deleted record\'s collection (as activity logs name it)', examples: ['leads'] }),
  record_id: Uuid({ description: 'The deleted record\'s id, which a restore gives it again' }),
  title: Nullable(Type.String({ description: 'What the record was called (name, title, person…)', examples: ['Maria Santos'] })),
  deleted_by: Nullable(Strict({ id: Uuid(), name: Type.String(), email: Type.String() })),
  deleted_at: Timestamp(),
  deleted_with: Type.Integer({ minimum: 0, description: 'Records deleted with it (a project\'s gallery images), restored with it' }),
}));
const TrashPage = named('TrashPage', Paginated(TrashEntry));
const TrashRestored = named('TrashRestored', Strict({
  id: Uuid({ description: 'The restored record\'s id (as before its deletion)' }),
  resource: Type.String({ examples: ['projects'] }),
  restored: Type.Integer({ minimum: 1, description: 'Records recreated: the record and those deleted with it' }),
  message: Type.String({ examples: ['Project restored'] }),
}));
const LogParams = Strict({ log_id: Uuid({ description: 'The trash entry\'s id (its delete activity log)' }) });

/** The trash of `module` as a list: entries not restored, newest first, filtered like any list. */
function trashList(module: ModuleName): Resource {
  const names = trashableResources(module).map((resource) => resource.name).sort();
  return {
    name: 'trash',
    module,
    label: 'Trash entry',
    table: trash,
    id: trash.id,
    view: {
      fields: {
        id: trash.id, resource: trash.resource, record_id: trash.record_id, title: trash.title,
        deleted_by: { id: users.id, name: users.name, email: users.email }, deleted_at: trash.deleted_at,
        deleted_with: sql<number>`jsonb_array_length(${trash.deleted_with})::int`,
      },
      joins: (query) => query.leftJoin(users, eq(users.id, trash.user_id)),
    },
    list: {
      sortable: { deleted_at: trash.deleted_at },
      defaultSort: 'deleted_at',
      filters: {
        resource: anyOf(trash.resource, StringEnum(names, { description: 'The deleted records\' collection' })),
        user_id: equals(trash.user_id, Uuid({ description: 'Who deleted them' })),
      },
      ranges: { deleted: trash.deleted_at },
      search: [trash.title],
    },
    scope: allOf([is.equal(trash.module, module), is.null(trash.restored_at)]),
  };
}

/** Registered inside the module's guarded routes, after its resources (whose DELETE routes make them trashable). */
export function trashRoutes(module: ModuleName) {
  return async (app: App) => {
    const list = trashList(module);
    // crm record scopes: a scoped caller sees and restores only entries of records their users owned.
    const scoped = async (request: Parameters<typeof ownersOf>[1]): Promise<ScopeOption> => {
      if (module !== 'crm') return {};
      const owners = await ownersOf(app, request);
      return owners ? { scope: allOf([list.scope, trashOwnedBy(owners)]), scopeKey: `trash:${module}|owners:${owners.join(',')}` } : {};
    };

    app.get(`/api/${module}/trash`, {
      config: { flag: 'can_delete' },
      schema: {
        operationId: `list${module === 'cms' ? 'Cms' : 'Crm'}Trash`,
        summary: `Deleted ${module} records that can be restored`,
        description: `Records deleted in the last TRASH_RETENTION_DAYS (default 30), newest first, until restored or purged; filters by \`resource\`, by who deleted them (\`user_id\`) and by when (\`deleted_from\`, \`deleted_to\`), \`q\` searches their titles. Deleted records are in no other list, total, export or unique check.`,
        querystring: listQuerySchema(list), response: { 200: TrashPage, ...errorResponses },
      },
    }, async (request) => app.lists.page(list, request.query as Record<string, unknown>, await scoped(request)));

    app.post(`/api/${module}/trash/:log_id/restore`, {
      config: { flag: 'can_delete' },
      schema: {
        operationId: `restore${module === 'cms' ? 'Cms' : 'Crm'}Trash`,
        summary: 'Restore a deleted record, with its id and what was deleted with it',
        description: 'Recreates the record as it was (same id), the records deleted with it (a project\'s gallery images) and sets back what its '
          + 'deletion changed (a unit its reservation held). 409 naming the field when a unique value is now taken, a record it names is gone or '
          + 'something it changed has changed since; 409 when restored already; 404 once purged. Audited: each recreated record\'s create (and each '
          + 'change set back) has `restored_from` set to the delete\'s activity log. A scheduled campaign whose time has passed comes back as a draft.',
        params: LogParams, response: { 200: TrashRestored, ...errorResponses }, 'x-answer-message': 'Lead restored',
      },
    }, async (request) => {
      const actor = await actorOf(app, request);
      const { scope } = await scoped(request);
      const { entry, resource, restored } = await restoreFromTrash(app.database.db, actor, module, request.params.log_id, scope);
      let message = `${resource.label} restored`;
      // A scheduled campaign gets its job again; one whose time has passed while it was deleted waits as a draft.
      if (entry.resource === 'campaigns' && entry.record.status === 'scheduled' && typeof entry.record.scheduled_at === 'string') {
        const at = new Date(entry.record.scheduled_at);
        if (at.getTime() > clock.now().getTime()) {
          await app.jobs.send(campaignScheduled, { campaignId: entry.record_id, scheduledAt: at.toISOString() }, { startAfter: at });
        } else {
          await audited(app.database.db, actor, async (work) => {
            work.restoredFrom = entry.id;
            await work.update(resource, entry.record_id, { status: 'draft', scheduled_at: null } as never);
          });
          message = `${resource.label} restored as a draft: its scheduled time passed while it was deleted`;
        }
      }
      return { id: entry.record_id, resource: entry.resource, restored, message };
    });
  };
}

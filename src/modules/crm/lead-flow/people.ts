import { Type } from '@sinclair/typebox';
import { and, asc, eq, exists, isNull, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { clock } from '../../../clock.js';
import { departments, moduleAccess, users } from '../../../db/schema/index.js';
import { named } from '../../../http/openapi.js';
import { errorResponses, Nullable, Strict, Uuid } from '../../../http/schemas.js';
import { eligible } from './routing.js';
import { mayManageLeadFlow } from './settings-access.js';

const Person = named('LeadFlowPerson', Strict({
  id: Uuid(),
  name: Type.String(),
  department: Nullable(Type.String({ description: 'The name of their department' })),
  away: Type.Boolean({ description: 'Marked away: skipped by round robins, offered no leads to claim' }),
  eligible: Type.Boolean({ description: 'May be handed leads now (live, crm write, not away)' }),
}));

const People = named('LeadFlowPeople', Strict({
  data: Type.Array(Person),
  may_manage: Type.Boolean({ description: 'Whether the caller may change the lead-flow settings (an administrator, or a department manager with crm write)' }),
}));

/**
 * The people lead flow can hand leads to (live users with crm write), for whoever sets it up: a department manager
 * chooses group members and rule targets here without reading the users list (iam). Names and departments only, as a
 * lead's assignee shows them to every crm reader.
 */
export default async function leadFlowPeopleRoutes(app: App) {
  const { db } = app.database;
  app.get('/api/crm/lead-flow/people', {
    schema: {
      operationId: 'listLeadFlowPeople', summary: 'The people leads can be routed to, and whether the caller may change the lead-flow settings',
      response: { 200: People, ...errorResponses },
    },
  }, async (request) => {
    const now = clock.now();
    const rows = await db.select({
      id: users.id, name: users.name, department: departments.name,
      away: sql<boolean>`exists (select 1 from lead_flow_away w where w.user_id = ${users.id} and (w.until is null or w.until > ${now.toISOString()}::timestamptz))`,
      eligible: eligible(users.id, now),
    }).from(users).leftJoin(departments, eq(departments.id, users.departmentId))
      .where(and(isNull(users.deletedAt), exists(db.select({ one: sql`1` }).from(moduleAccess)
        .where(and(eq(moduleAccess.user_id, users.id), eq(moduleAccess.module, 'crm'), eq(moduleAccess.can_write, true))))))
      .orderBy(asc(users.name), asc(users.id)).limit(1000);
    return { data: rows.map((row) => ({ ...row, away: Boolean(row.away), eligible: Boolean(row.eligible) })), may_manage: await mayManageLeadFlow(app, request) };
  });
}

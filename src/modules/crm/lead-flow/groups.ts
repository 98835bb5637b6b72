import { Type } from '@sinclair/typebox';
import { and, asc, count, eq, inArray, isNull, ne, sql } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { clock } from '../../../clock.js';
import { audited, type Work } from '../../../data/mutations.js';
import { defineResource } from '../../../data/resource.js';
import type { Executor } from '../../../db/client.js';
import { LEAD_GROUP_KINDS, leadFlowRules, leadGroupMembers, leadGroups, leads, users } from '../../../db/schema/index.js';
import { conflict, notFound, validationError } from '../../../errors.js';
import { actorOf } from '../../../http/actor.js';
import { named } from '../../../http/openapi.js';
import { Created, errorResponses, IdParams, Message, Nullable, PartialStrict, RequiredText, Strict, StringEnum, Timestamp, Uuid } from '../../../http/schemas.js';
import { requireFlowManager } from './settings-access.js';
import { eligible, memberColumn } from './routing.js';

/**
 * Lead groups: agents who share new leads, in turn (round robin), by claiming them (first to claim, with a time limit
 * and a fallback) or from a shared pool (a pond). The group row and its ordered members are one record: its audit trail
 * holds the member ids with the row.
 */
export const leadGroupResource = defineResource({
  name: 'lead_groups',
  module: 'crm',
  label: 'Lead group',
  table: leadGroups,
  id: leadGroups.id,
  view: { fields: { id: leadGroups.id, name: leadGroups.name, kind: leadGroups.kind } },
});

const Member = Strict({
  user_id: Uuid(),
  name: Type.String(),
  position: Type.Integer({ minimum: 0, description: 'Turn order, from 0' }),
  away: Type.Boolean({ description: 'Marked away now: skipped by round robins, not offered leads to claim' }),
  eligible: Type.Boolean({ description: 'May be handed leads now: not deleted, crm write, not away' }),
});

export const LeadGroup = Strict({
  id: Uuid(),
  name: Type.String({ examples: ['Tower B sales'] }),
  kind: StringEnum(LEAD_GROUP_KINDS),
  claim_minutes: Nullable(Type.Integer({ minimum: 1, maximum: 30, description: 'First to claim: minutes its members have to claim a lead', examples: [10] })),
  fallback_user_id: Nullable(Uuid({ description: 'Who gets a lead nobody in the group could take or claimed in time' })),
  fallback_group_id: Nullable(Uuid({ description: 'The group such a lead goes to instead (one fallback at most)' })),
  members: Type.Array(Member),
  next_user_id: Nullable(Uuid({ description: 'Round robin: the eligible member whose turn is next' })),
  waiting: Type.Integer({ minimum: 0, description: 'Leads waiting in its pool (first to claim, pond)' }),
  created_at: Timestamp(),
  updated_at: Timestamp(),
});

const LeadGroupInput = Strict({
  name: RequiredText({ maxLength: 200, examples: ['Tower B sales'] }),
  kind: StringEnum(LEAD_GROUP_KINDS),
  claim_minutes: Type.Optional(Nullable(Type.Integer({ minimum: 1, maximum: 30, description: 'Required for first to claim (1–30); only for it', examples: [10] }))),
  fallback_user_id: Type.Optional(Nullable(Uuid())),
  fallback_group_id: Type.Optional(Nullable(Uuid())),
  members: Type.Array(Uuid(), { minItems: 1, maxItems: 200, uniqueItems: true, description: 'User ids in turn order: live users with crm write' }),
});
type GroupInput = typeof LeadGroupInput.static;
type GroupRow = typeof leadGroups.$inferSelect;

/** The groups as the API shows them (all, or those of `ids`), by name. */
async function groupsView(db: Executor, ids?: string[]) {
  const now = clock.now();
  const rows = await db.select().from(leadGroups).where(ids ? inArray(leadGroups.id, ids) : undefined).orderBy(asc(sql`lower(${leadGroups.name})`), asc(leadGroups.id));
  if (!rows.length) return [];
  const groupIds = rows.map((row) => row.id);
  const [members, waiting] = await Promise.all([
    db.select({
      group_id: leadGroupMembers.group_id, user_id: leadGroupMembers.user_id, name: users.name, position: leadGroupMembers.position,
      away: sql<boolean>`exists (select 1 from lead_flow_away w where w.user_id = ${memberColumn} and (w.until is null or w.until > ${now}))`,
      eligible: eligible(memberColumn, now),
    }).from(leadGroupMembers).innerJoin(users, eq(users.id, leadGroupMembers.user_id))
      .where(inArray(leadGroupMembers.group_id, groupIds)).orderBy(asc(leadGroupMembers.position)),
    db.select({ pool_id: leads.pool_id, n: count() }).from(leads).where(inArray(leads.pool_id, groupIds)).groupBy(leads.pool_id),
  ]);
  return rows.map((group) => {
    const own = members.filter((member) => member.group_id === group.id).map(({ group_id: _group, ...member }) => ({ ...member, away: !!member.away, eligible: !!member.eligible }));
    const ready = own.filter((member) => member.eligible);
    const next = group.kind === 'round_robin' ? (ready.find((member) => member.position >= group.next_position) ?? ready[0]) : undefined;
    const { next_position: _cursor, ...fields } = group;
    return { ...fields, members: own, next_user_id: next?.user_id ?? null, waiting: Number(waiting.find((w) => w.pool_id === group.id)?.n ?? 0) };
  });
}

/** 400 unless `id` is a live user with crm write: who may be handed leads. */
export async function requireAgent(db: Executor, id: string, field: string) {
  const [user] = await db.select({ id: users.id, writes: sql<boolean>`exists (select 1 from module_access a where a.user_id = ${users}.id and a.module = 'crm' and a.can_write)` })
    .from(users).where(and(eq(users.id, id), isNull(users.deletedAt))).limit(1);
  if (!user) throw validationError({ [field]: 'must be an existing user' });
  if (!user.writes) throw validationError({ [field]: 'must be a user with crm write: only they may be handed leads' });
}

/** The checks of a group as it would be after the change (`exceptId`: the group itself, when it exists). */
async function checkGroup(db: Executor, group: GroupInput, exceptId?: string) {
  if (group.claim_minutes != null && group.kind !== 'first_to_claim') throw validationError({ claim_minutes: 'only a first-to-claim group has a claim time: leave it out (or null)' });
  if (group.kind === 'first_to_claim' && group.claim_minutes == null) throw validationError({ claim_minutes: 'a first-to-claim group needs the minutes its members have to claim a lead (1–30)' });
  if (group.fallback_user_id && group.fallback_group_id) throw validationError({ fallback_group_id: 'name one fallback: a user or a group, not both' });
  if (group.kind === 'first_to_claim' && !group.fallback_user_id && !group.fallback_group_id) {
    throw validationError({ fallback_user_id: 'a first-to-claim group needs a fallback (a user or a group) for the leads nobody claims in time' });
  }
  if (group.fallback_user_id) await requireAgent(db, group.fallback_user_id, 'fallback_user_id');
  if (group.fallback_group_id) {
    if (group.fallback_group_id === exceptId) throw validationError({ fallback_group_id: 'must be another group, not the group itself' });
    const [found] = await db.select({ id: leadGroups.id }).from(leadGroups).where(eq(leadGroups.id, group.fallback_group_id)).limit(1);
    if (!found) throw validationError({ fallback_group_id: 'must be an existing lead group' });
  }
  for (const [index, id] of group.members.entries()) await requireAgent(db, id, `members.${index}`);
  const [taken] = await db.select({ id: leadGroups.id }).from(leadGroups)
    .where(and(sql`lower(${leadGroups.name}) = lower(${group.name})`, exceptId ? ne(leadGroups.id, exceptId) : undefined)).limit(1);
  if (taken) throw conflict(`A lead group named "${group.name}" already exists`);
}

const memberIdsOf = async (db: Executor, groupId: string) =>
  (await db.select({ id: leadGroupMembers.user_id }).from(leadGroupMembers).where(eq(leadGroupMembers.group_id, groupId)).orderBy(asc(leadGroupMembers.position))).map((m) => m.id);

async function setMembers(work: Work, groupId: string, members: string[]) {
  await work.tx.delete(leadGroupMembers).where(eq(leadGroupMembers.group_id, groupId));
  await work.tx.insert(leadGroupMembers).values(members.map((user_id, position) => ({ group_id: groupId, user_id, position })));
}

/** 409 while leads wait in the group's pool (they would be left in a pool nobody serves). */
async function assertNoneWaiting(db: Executor, groupId: string, what: string) {
  const [{ n }] = await db.select({ n: count() }).from(leads).where(eq(leads.pool_id, groupId));
  if (n) throw conflict(`${n} lead${n === 1 ? '' : 's'} wait in this group: have them claimed or assigned before you ${what}`);
}

export default async function leadGroupRoutes(app: App) {
  const { db } = app.database;
  const path = '/api/crm/lead-flow/groups';
  const manager = requireFlowManager(app);
  named('LeadGroup', LeadGroup);
  const GroupList = named('LeadGroupList', Strict({ data: Type.Array(LeadGroup) }));

  app.get(path, {
    schema: { operationId: 'listLeadGroups', summary: 'All lead groups, by name, with their members', response: { 200: GroupList, ...errorResponses } },
  }, async () => ({ data: await groupsView(db) }));

  app.get(`${path}/:id`, {
    schema: { operationId: 'getLeadGroup', summary: 'One lead group', params: IdParams, response: { 200: LeadGroup, ...errorResponses } },
  }, async (request) => {
    const [group] = await groupsView(db, [request.params.id]);
    if (!group) throw notFound('Lead group');
    return group;
  });

  app.post(path, {
    preHandler: manager,
    schema: {
      operationId: 'createLeadGroup', summary: 'Create a lead group (administrators and department managers)', body: named('LeadGroupCreate', LeadGroupInput),
      response: { 201: Created, ...errorResponses }, 'x-answer-message': 'Lead group created',
    },
  }, async (request, reply) => {
    const body = request.body;
    await checkGroup(db, body);
    const { members, ...values } = body;
    const group = await audited(db, await actorOf(app, request), async (work) => {
      const [row] = await work.tx.insert(leadGroups).values({ ...values, claim_minutes: values.claim_minutes ?? null }).returning();
      await setMembers(work, row.id, members);
      await work.audit({ action: 'create', resource: leadGroupResource, id: row.id, after: { ...row, members } });
      return row;
    });
    return reply.code(201).send({ id: group.id, message: 'Lead group created' });
  });

  const LeadGroupPatch = PartialStrict(LeadGroupInput);
  app.patch(`${path}/:id`, {
    preHandler: manager,
    schema: {
      operationId: 'updateLeadGroup', summary: 'Update a lead group (only the fields sent; members: the whole list, in order)', params: IdParams,
      body: named('LeadGroupUpdate', LeadGroupPatch), response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Lead group updated',
    },
  }, async (request) => {
    const body = request.body;
    const id = request.params.id;
    await audited(db, await actorOf(app, request), async (work) => {
      const current = await work.lock(leadGroupResource, id) as GroupRow;
      const members = await memberIdsOf(work.tx, id);
      // Leaving first to claim drops its claim time unless the request says otherwise.
      const claim = body.claim_minutes !== undefined ? body.claim_minutes : body.kind && body.kind !== 'first_to_claim' ? null : current.claim_minutes;
      const next: GroupInput = {
        name: body.name ?? current.name, kind: body.kind ?? current.kind, claim_minutes: claim,
        fallback_user_id: body.fallback_user_id !== undefined ? body.fallback_user_id : current.fallback_user_id,
        fallback_group_id: body.fallback_group_id !== undefined ? body.fallback_group_id : current.fallback_group_id,
        members: body.members ?? members,
      };
      await checkGroup(work.tx, next, id);
      if (next.kind === 'round_robin' && current.kind !== 'round_robin') await assertNoneWaiting(work.tx, id, 'make it a round robin');
      const { members: nextMembers, ...values } = next;
      const [row] = await work.tx.update(leadGroups).set({ ...values, claim_minutes: values.claim_minutes ?? null, updated_at: clock.now() }).where(eq(leadGroups.id, id)).returning();
      if (body.members) await setMembers(work, id, nextMembers);
      await work.audit({ action: 'update', resource: leadGroupResource, id, before: { ...current, members }, after: { ...row, members: nextMembers } });
    });
    return { message: 'Lead group updated' };
  });

  app.delete(`${path}/:id`, {
    preHandler: manager,
    schema: {
      operationId: 'deleteLeadGroup', summary: 'Delete a lead group (409 while a rule or another group names it, or leads wait in it)', params: IdParams,
      response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Lead group deleted',
    },
  }, async (request) => {
    const id = request.params.id;
    await audited(db, await actorOf(app, request), async (work) => {
      const current = await work.lock(leadGroupResource, id);
      const rules = await work.tx.select({ name: leadFlowRules.name }).from(leadFlowRules).where(eq(leadFlowRules.assign_group_id, id)).orderBy(asc(leadFlowRules.position));
      if (rules.length) throw conflict(`Rules send leads to this group: ${rules.map((rule) => `"${rule.name}"`).join(', ')}; change or delete them first`);
      const groups = await work.tx.select({ name: leadGroups.name }).from(leadGroups).where(and(eq(leadGroups.fallback_group_id, id), ne(leadGroups.id, id)));
      if (groups.length) throw conflict(`Groups fall back to this group: ${groups.map((group) => `"${group.name}"`).join(', ')}; give them another fallback first`);
      await assertNoneWaiting(work.tx, id, 'delete it');
      const members = await memberIdsOf(work.tx, id);
      // Its members go with it (cascade); its trail says who they were.
      await work.tx.delete(leadGroups).where(eq(leadGroups.id, id));
      await work.audit({ action: 'delete', resource: leadGroupResource, id, before: { ...current, members } });
    });
    return { message: 'Lead group deleted' };
  });
}

import { and, eq } from 'drizzle-orm';
import type { App } from '../../../types.js';
import { recordScope } from '../../../auth/guard.js';
import { findOne } from '../../../data/list.js';
import { audited } from '../../../data/mutations.js';
import { leadGroupMembers, leads } from '../../../db/schema/index.js';
import { conflict, forbidden, notFound } from '../../../errors.js';
import { actorOf } from '../../../http/actor.js';
import { errorResponses, IdParams, Message } from '../../../http/schemas.js';
import { leadResource } from '../lead-resource.js';
import { assignLead } from './routing.js';

export default async function claimRoutes(app: App) {
  const { db } = app.database;
  app.post('/api/crm/leads/:id/claim', {
    schema: {
      operationId: 'claimLead', summary: 'Claim a lead waiting in a group you belong to (a first-to-claim group or a pond): it becomes yours',
      description: 'The lead must wait in the pool of a group the caller is a member of, unassigned. Of several claims at once exactly one wins; '
        + 'the others are 409. A member of its pool sees the lead whatever their record scope; anyone else who cannot read it gets 404.',
      params: IdParams, response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Lead claimed',
    },
  }, async (request) => {
    const id = request.params.id;
    await findOne(db, leadResource, id, await recordScope(app, request, leadResource));
    const actor = await actorOf(app, request);
    const userId = actor.userId!;
    await audited(db, actor, async (work) => {
      // Locked whatever the caller's scope: they could read it a moment ago, and a winner's claim takes it out of their pool.
      const [lead] = await work.tx.select().from(leads).where(eq(leads.id, id)).for('update');
      if (!lead) throw notFound('Lead');
      if (lead.assigned_to) throw conflict('This lead has already been claimed');
      if (!lead.pool_id) throw conflict('This lead is not waiting to be claimed');
      const [member] = await work.tx.select({ id: leadGroupMembers.user_id }).from(leadGroupMembers)
        .where(and(eq(leadGroupMembers.group_id, lead.pool_id), eq(leadGroupMembers.user_id, userId)));
      if (!member) throw forbidden('Only members of the group this lead waits in may claim it');
      await assignLead({ work, services: app }, lead, userId, 'claim', { rule: null });
    });
    return { message: 'Lead claimed' };
  });
}

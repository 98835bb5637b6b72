import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { actorOf } from '../../http/actor.js';
import { Created, Email, errorResponses, Message, Nullable, RequiredText, Strict } from '../../http/schemas.js';
import { InquiryInput } from '../crm/inquiries.js';
import { receiveWebsiteInquiry } from '../crm/lead-flow/website.js';
import { subscribe } from '../crm/newsletters.js';
import { noticeInquiry } from '../crm/notices.js';

/** What the website's visitors send: inquiries and newsletter subscriptions (no session; write limit per IP). */
export default async function publicFormRoutes(app: App) {
  const tags = ['public'];
  app.post('/api/public/inquiries', {
    schema: {
      tags, security: [], summary: 'Send an inquiry from the website; staff see it as unread',
      description: 'With lead flow on (at least one lead-flow rule), the inquiry is also the person\'s lead, in the same transaction: linked to '
        + 'their newest lead with the same e-mail (case-insensitive) or phone (compared by digits), or a new lead (source website, interest the '
        + 'subject) that the rules route (channel `website`). A known lead is not routed again.',
      body: InquiryInput,
      response: { 201: Created, ...errorResponses }, 'x-answer-message': 'Thank you, your inquiry has been received',
    },
  }, async (request, reply) => {
    const row = await receiveWebsiteInquiry(app, await actorOf(app, request), request.body);
    noticeInquiry(app, row);
    return reply.code(201).send({ id: row.id, message: 'Thank you, your inquiry has been received' });
  });

  app.post('/api/public/newsletter', {
    schema: {
      tags, security: [], summary: 'Subscribe to the newsletter (the same answer whether or not the address was known)',
      body: Strict({ email: Email(), name: Type.Optional(Nullable(RequiredText())) }),
      response: { 200: Message, ...errorResponses }, 'x-answer-message': 'Thank you for subscribing',
    },
  }, async (request) => {
    await subscribe(app.database.db, await actorOf(app, request), request.body.email, request.body.name ?? null, { announce: true });
    return { message: 'Thank you for subscribing' };
  });
}

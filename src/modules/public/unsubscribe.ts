import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { App } from '../../types.js';
import { validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { ErrorBody, Message, Strict } from '../../http/schemas.js';
import { unsubscribe } from '../crm/newsletters.js';
import { unsubscribeSecretOf, verifyUnsubscribeToken } from '../crm/unsubscribe-token.js';
import { page, wantsHtml } from './page.js';

const TokenQuery = Strict({ token: Type.String({ minLength: 1, maxLength: 2000, description: 'From the link in the campaign e-mail' }) });
const DONE = 'You have been unsubscribed';
const INVALID = 'This unsubscribe link is invalid or incomplete.';

/**
 * The unsubscribe link of campaign e-mails (CONTRACT §9): the signed token names the address. Tokens are signed with
 * the service's own stored secret; links signed with AUTH_SECRET before it existed are still honoured.
 */
export default async function unsubscribeRoutes(app: App) {
  const addressOf = (token: string) => verifyUnsubscribeToken(unsubscribeSecretOf(app.database), token) ?? verifyUnsubscribeToken(app.config.authSecret, token);

  const handle = async (request: FastifyRequest, reply: FastifyReply) => {
    const html = wantsHtml(request);
    const email = addressOf((request.query as { token: string }).token);
    if (!email) {
      if (html) return reply.code(400).type('text/html; charset=utf-8').send(page('Link not valid', `${INVALID} Use the link from the newsletter e-mail as it is, or reply to that e-mail and we will remove you.`));
      throw validationError({ token: 'is invalid' });
    }
    await unsubscribe(app.database.db, await actorOf(app, request), email);
    if (html) return reply.type('text/html; charset=utf-8').send(page(DONE, `${email} will receive no more newsletters from us.`));
    return { message: DONE };
  };

  const responses = {
    200: { description: 'Unsubscribed: `{message}` as JSON, or a small HTML page when the client prefers text/html (a browser)', content: { 'application/json': { schema: Message }, 'text/html': { schema: { type: 'string' } } } },
    400: ErrorBody, 429: ErrorBody,
  };

  app.get('/api/public/newsletter/unsubscribe', {
    schema: { tags: ['public'], security: [], 'x-answer-message': DONE, summary: 'Unsubscribe through the link of a campaign e-mail', querystring: TokenQuery, response: responses },
  }, handle);

  // RFC 8058 one-click: the mailbox provider POSTs `List-Unsubscribe=One-Click` to the very link of the header.
  await app.register(async (oneClick) => {
    oneClick.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string', bodyLimit: 4096 }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    oneClick.post('/api/public/newsletter/unsubscribe', {
      schema: {
        tags: ['public'], security: [], 'x-answer-message': DONE, summary: 'One-click unsubscribe (RFC 8058), as mailbox providers send it',
        description: 'The body is `List-Unsubscribe=One-Click` (application/x-www-form-urlencoded or multipart/form-data); the token is the link\'s.',
        querystring: TokenQuery,
        body: Type.Optional(Type.Object({ 'List-Unsubscribe': Type.Optional(Type.String({ maxLength: 100 })) })),
        response: responses,
      },
    }, async (request, reply) => {
      const body = request.body as Record<string, unknown> | undefined;
      if (body && body['List-Unsubscribe'] !== undefined && body['List-Unsubscribe'] !== 'One-Click') {
        throw validationError({ 'List-Unsubscribe': 'must be One-Click' });
      }
      return handle(request, reply);
    });
  });
}


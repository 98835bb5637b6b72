import { Type } from '@sinclair/typebox';
import type { App } from '../../app.js';
import { validationError } from '../../errors.js';
import { actorOf } from '../../http/actor.js';
import { ErrorBody, Message, Strict } from '../../http/schemas.js';
import { unsubscribe } from '../crm/newsletters.js';
import { verifyUnsubscribeToken } from '../crm/unsubscribe-token.js';

/** The unsubscribe link of campaign e-mails: the signed token names the address (CONTRACT §9). */
export default async function unsubscribeRoutes(app: App) {
  app.get('/api/public/newsletter/unsubscribe', {
    schema: {
      tags: ['public'],
      summary: 'Unsubscribe through the link of a campaign e-mail',
      querystring: Strict({ token: Type.String({ minLength: 1, maxLength: 2000 }) }),
      response: { 200: Message, 400: ErrorBody, 429: ErrorBody },
    },
  }, async (request) => {
    const email = verifyUnsubscribeToken(app.config.authSecret, request.query.token);
    if (!email) throw validationError({ token: 'is invalid' });
    await unsubscribe(app.database.db, await actorOf(app, request), email);
    return { message: 'You have been unsubscribed' };
  });
}

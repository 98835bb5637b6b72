import { Type } from '@sinclair/typebox';
import { eq } from 'drizzle-orm';
import type { App } from '../../app.js';
import { newsletterSubscriptions } from '../../db/schema/index.js';
import { auditedTransaction } from '../../http/crud.js';
import { validationError } from '../../http/errors.js';
import { ErrorBody, Message, Strict } from '../../http/schemas.js';
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
    const email = verifyUnsubscribeToken(app.config.authSecret, (request.query as { token: string }).token);
    if (!email) throw validationError({ token: 'is invalid' });
    await auditedTransaction(app, request, async (tx, audit) => {
      const [current] = await tx.select().from(newsletterSubscriptions).where(eq(newsletterSubscriptions.email, email)).for('update');
      if (!current || current.status === 'unsubscribed') return;
      const [row] = await tx.update(newsletterSubscriptions).set({ status: 'unsubscribed', unsubscribed_at: new Date() })
        .where(eq(newsletterSubscriptions.id, current.id)).returning();
      await audit(tx, { action: 'update', module: 'crm', resource: 'newsletters', resourceId: row.id, before: current, after: row });
    });
    return { message: 'You have been unsubscribed' };
  });
}

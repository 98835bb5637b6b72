import { Type } from '@sinclair/typebox';
import type { App } from '../../app.js';

/** Public liveness of the service and its database. */
export default async function healthRoutes(app: App) {
  app.get('/api/health', {
    config: { rateLimit: false },
    schema: {
      tags: ['system'],
      summary: 'Service health: 200 when the database answers, 503 when it does not',
      security: [],
      response: {
        200: Type.Object({ status: Type.Literal('ok') }),
        503: Type.Object({ status: Type.Literal('unavailable') }),
      },
    },
  }, async (request, reply) => {
    try {
      await app.database.ping();
      return { status: 'ok' as const };
    } catch (err) {
      request.log.warn({ err }, 'health check: database unavailable');
      return reply.code(503).send({ status: 'unavailable' as const });
    }
  });
}

import { Type } from '@sinclair/typebox';
import type { App } from '../../types.js';
import { LiveHub } from '../../live/hub.js';
import { requireSession } from '../../auth/guard.js';
import { errorResponses } from '../../http/schemas.js';

const EXAMPLE = [
  'retry: 2000',
  ': live',
  '',
  'id: v1;mfz3k1c0;7340:7340:',
  '',
  'id: v1;mfz3k1c8;7340:7342:;7340:7340:;40213',
  'event: change',
  'data: {"resource":"leads","id":"0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0e","action":"created"}',
  '',
  'id: v1;mfz3k1c8;7340:7342:;7340:7340:;40215',
  'event: notification',
  'data: {"id":"0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0d","kind":"lead_assigned","title":"Lead assigned to you: Maria Santos","body":"Juan dela Cruz assigned this lead to you.","record":{"resource":"leads","id":"0193f1b2-7c1e-7a3b-9c4d-5e6f7a8b9c0e"},"created_at":"2026-11-23T09:30:00.000Z","read_at":null}',
  '',
  'id: v1;mfz3k1c8;7342:7342:',
  'event: unread',
  'data: {"unread":3}',
  '',
  ': heartbeat',
  '',
  '',
].join('\n');

/** `GET /api/live`: the signed-in user's live stream (server-sent events); src/live/hub.ts does the work. */
export default async function liveRoutes(app: App) {
  const hub = new LiveHub(app, { perUser: app.config.liveStreamsPerUser });
  // Live streams never end by themselves: they are ended before the server waits for its connections to close.
  app.addHook('preClose', async () => hub.closeAll());
  app.get('/api/live', {
    onRequest: requireSession(app, { tokens: true }),
    schema: {
      tags: ['notifications'],
      operationId: 'openLiveStream',
      summary: 'Your live stream of notifications and changes (server-sent events)',
      description: 'A `text/event-stream` that stays open. `event: notification`: a new notification of yours (as GET /api/notifications lists it). '
        + '`event: unread`: `{unread}`, your unread count after a change to your notifications. `event: change`: `{resource, id, action}` '
        + '(created, updated, deleted) for a record you may read, before or after the change; `{resource, action: "bulk"}` when many '
        + 'changed at once (refetch). `event: reset`: what you missed cannot be told (reconnected too late): refetch. `event: closed`: '
        + '`{reason}` before the server ends it (`too_many_streams`: LIVE_STREAMS_PER_USER reached, your oldest stream is closed: do not '
        + 'reconnect it; `signed_out`). Each event has an `id:`; reconnecting with `Last-Event-ID` (EventSource does) or `?last_event_id=` '
        + 'resumes after it. A comment line every 20 s. See docs/integrators/live-stream.md.',
      querystring: Type.Object({
        last_event_id: Type.Optional(Type.String({ maxLength: 100_000, description: 'Resume after this event id (as the Last-Event-ID header does); one not understood is ignored' })),
      }, { additionalProperties: false }),
      response: {
        200: { description: 'The stream (text/event-stream), until the client or the server closes it', content: { 'text/event-stream': { schema: { type: 'string' }, example: EXAMPLE } } },
        ...errorResponses,
      },
    },
  }, async (request, reply) => {
    const header = request.headers['last-event-id'];
    const lastEventId = (typeof header === 'string' ? header : undefined) ?? (request.query as { last_event_id?: string }).last_event_id;
    await hub.open(request, reply, lastEventId);
    return reply;
  });
}

/**
 * The webhook event types: one exported list, used to validate an endpoint's subscriptions and as the OpenAPI enum.
 *
 * Every audited resource has `<singular>.created|updated|deleted` (the singular, snake_case form of its label), written
 * by the audited path itself in the statement that writes the activity log; the activity log and the webhook tables
 * have none. The named events say more than a row changed.
 */

/** Audited resource (its activity-log name) → the singular its events are named by. Absent: no events. */
export const RESOURCE_EVENTS = {
  projects: 'project',
  galleries: 'gallery_image',
  articles: 'article',
  careers: 'career',
  amenities: 'amenity',
  leads: 'lead',
  inventory: 'inventory_unit',
  reservations: 'reservation',
  inquiries: 'inquiry',
  newsletters: 'newsletter_subscription',
  campaigns: 'campaign',
  users: 'user',
  departments: 'department',
  module_access: 'module_access',
  api_tokens: 'api_token',
  sso_providers: 'sso_provider',
  imports: 'import',
  uploads: 'upload',
  activities: 'lead_activity',
  tasks: 'task',
  lead_groups: 'lead_group',
  lead_flow_rules: 'lead_flow_rule',
  action_plans: 'action_plan',
  lead_action_plans: 'lead_action_plan',
} as const satisfies Record<string, string>;

/** Resources audited without events: the activity log itself, and the webhook tables (no event about events). */
export const RESOURCES_WITHOUT_EVENTS = ['activity_logs', 'webhooks', 'webhook_deliveries'] as const;

export const ACTION_EVENTS = { create: 'created', update: 'updated', delete: 'deleted' } as const;

/** Events that say more than "a row changed". */
export const NAMED_EVENTS = [
  /** A visitor sent the public inquiry form (staff-recorded inquiries are only `inquiry.created`). */
  'inquiry.received',
  /** The public form subscribed an address: a new subscription, or an unsubscribed one re-activated. */
  'newsletter.subscribed',
  /** A reservation's status moved; `data` holds `from` and `to`. */
  'reservation.status_changed',
  /** A campaign's delivery finished; `data` holds its delivery counts. */
  'campaign.sent',
  /** A lead has a new assignee; `data` holds `lead_id`, `assigned_to`, `previous` and `how` (rule, claim, fallback, manual, speed_limit). */
  'lead.assigned',
] as const;

type ResourceEvent = `${(typeof RESOURCE_EVENTS)[keyof typeof RESOURCE_EVENTS]}.${(typeof ACTION_EVENTS)[keyof typeof ACTION_EVENTS]}`;
export type NamedEvent = (typeof NAMED_EVENTS)[number];
export type EventType = ResourceEvent | NamedEvent;

/** Every event type an endpoint can subscribe to, in a stable order. */
export const EVENT_TYPES: readonly EventType[] = [
  ...Object.values(RESOURCE_EVENTS).flatMap((singular) => Object.values(ACTION_EVENTS).map((action) => `${singular}.${action}` as ResourceEvent)),
  ...NAMED_EVENTS,
];

/** Subscribes an endpoint to every event, present and future. */
export const ALL_EVENTS = '*';
/** What `events` may hold. */
export const SUBSCRIBABLE = [...EVENT_TYPES, ALL_EVENTS] as const;
/** The event "send test event" delivers to one endpoint, whatever it subscribes to. */
export const TEST_EVENT = 'webhook.test';

const known = new Set<string>(SUBSCRIBABLE);
export const isSubscribable = (type: string) => known.has(type);

/** The event of a change to `resource`, or undefined when the resource or the action (a privacy erase) has none. */
export function eventOf(resource: string, action: string): EventType | undefined {
  const singular = (RESOURCE_EVENTS as Record<string, string>)[resource];
  const event = (ACTION_EVENTS as Record<string, string>)[action];
  return singular && event ? (`${singular}.${event}` as EventType) : undefined;
}

/**
 * Status fields whose change is an event of its own, recorded with the update (whatever path changed it):
 * `data` holds `from` and `to`.
 */
export const STATUS_EVENTS: Record<string, { field: string; type: NamedEvent }> = {
  reservations: { field: 'status', type: 'reservation.status_changed' },
};

import { type QueryClient, type QueryKey, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useSyncExternalStore } from 'react';
import { type Change, holdLiveStream, isLiveConnected, type LiveEvent, onLiveEvent, onLiveStatus } from './stream';

// What a change of the service's records means for the console's cache. A change names a resource as the service
// declares it; the console's caches (react-admin's and the screens' own) are keyed by the console's resource name
// first, so invalidating that prefix reads again every list, record and panel of it that is on screen, and marks the
// rest stale. Screens that gather several resources (a lead's timeline and flow, My day) are named here too.

const CACHES: Record<string, QueryKey[]> = {
  leads: [['leads'], ['my-day']],
  activities: [['leads', 'timeline'], ['leads', 'flow'], ['my-day']],
  tasks: [['tasks'], ['leads', 'timeline'], ['leads', 'flow'], ['my-day']],
  reservations: [['reservations'], ['leads', 'timeline']],
  inquiries: [['inquiries'], ['leads', 'timeline']],
  galleries: [['projects']],
  api_tokens: [['api-tokens']],
  activity_logs: [['activity-logs']],
  module_access: [['users']],
  webhook_deliveries: [['webhooks']],
  lead_groups: [['lead-flow'], ['my-day']],
  lead_flow_rules: [['lead-flow']],
  action_plans: [['lead-flow'], ['leads', 'flow']],
  notifications: [['notifications']],
};
/** Every change may move a dashboard figure. */
const ALWAYS: QueryKey[] = [['dashboard']];

/** The cache prefixes a change of this resource touches. */
export const cachesOf = (resource: string): QueryKey[] => [...(CACHES[resource] ?? [[resource.replace(/_/g, '-')]]), ...ALWAYS];

/** A burst of changes (an import, a bulk update) is one read per screen: changes gathered for a moment, then applied. */
const GATHER_MS = 250;

function invalidator(queryClient: QueryClient) {
  const pending = new Map<string, QueryKey>();
  let timer: number | undefined;
  const flush = () => {
    timer = undefined;
    const keys = [...pending.values()];
    pending.clear();
    for (const queryKey of keys) void queryClient.invalidateQueries({ queryKey });
  };
  return {
    add(keys: QueryKey[]) {
      for (const key of keys) pending.set(JSON.stringify(key), key);
      timer ??= window.setTimeout(flush, GATHER_MS);
    },
    cancel: () => window.clearTimeout(timer),
  };
}

/**
 * Keeps the signed-in console's cache current from the live stream: a change marks its resource's caches stale (what
 * is on screen is read again), a notification the bell's and My day's, a reset (events were lost) everything.
 */
export function LiveUpdates() {
  const queryClient = useQueryClient();
  useEffect(() => {
    const invalidate = invalidator(queryClient);
    const stop = onLiveEvent((event: LiveEvent) => {
      switch (event.type) {
        case 'change':
          if (event.data?.resource) invalidate.add(cachesOf((event.data as Change).resource));
          break;
        case 'notification':
          invalidate.add([['notifications'], ['my-day']]);
          break;
        case 'unread':
          if (typeof event.data?.unread === 'number') queryClient.setQueryData(['notifications', 'unread-count'], { unread: event.data.unread });
          break;
        case 'reset':
          void queryClient.invalidateQueries();
          break;
      }
    });
    const release = holdLiveStream();
    return () => {
      stop();
      invalidate.cancel();
      release();
    };
  }, [queryClient]);
  return null;
}

/** Whether the live stream is open now. */
export const useLiveConnected = () => useSyncExternalStore(onLiveStatus, isLiveConnected);

/** How often a screen reads again by itself: never while the stream brings its changes, slowly while it is down. */
export const FALLBACK_POLL_MS = 5 * 60_000;
export function useFallbackPoll(): number | false {
  return useLiveConnected() ? false : FALLBACK_POLL_MS;
}

/** Calls `handler` for each event of this type while the component is shown. */
export function useLiveEvent<T extends LiveEvent['type']>(type: T, handler: (data: Extract<LiveEvent, { type: T }>['data']) => void) {
  const latest = useRef(handler);
  latest.current = handler;
  useEffect(() => onLiveEvent((event) => {
    if (event.type === type) latest.current(event.data as any);
  }), [type]);
}

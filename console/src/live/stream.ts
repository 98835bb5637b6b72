// One server-sent-events stream per tab (GET /api/live), shared by whoever listens. The browser's EventSource
// reconnects by itself after a dropped connection and resends the last event's id (Last-Event-ID), so nothing is missed.
// A refused connection (a 429, a 5xx, a service restarting) closes it for good: it is opened again after a pause with
// `?last_event_id=` (the same resumption); the service sends `reset` when it can no longer tell what was missed. When
// the service ends the stream itself (`closed`: signed out, or this user's oldest stream when they opened too many) it
// is not reopened, except that a tab evicted for too many streams takes its stream back when it is looked at again.
// While the stream is down, screens fall back to a slow poll (useFallbackPoll).

export type Change = { resource: string; id?: string; action: 'created' | 'updated' | 'deleted' | 'bulk' };
export type LiveEvent =
  | { type: 'notification'; data: unknown }
  | { type: 'change'; data: Change }
  | { type: 'unread'; data: { unread: number } }
  | { type: 'reset'; data: { reason?: string } | null };
type Listener = (event: LiveEvent) => void;

const EVENTS = ['notification', 'change', 'unread', 'reset'] as const;
/** After a refused connection: how long before opening a new stream (doubled each time, up to the last). */
const RETRY_MS = [5_000, 15_000, 60_000, 300_000];

const listeners = new Set<Listener>();
const statusListeners = new Set<() => void>();
let source: EventSource | null = null;
let connected = false;
let users = 0;
let retries = 0;
let retryTimer: number | undefined;
let closeTimer: number | undefined;
/** The id of the last event received: where a new stream resumes. */
let lastEventId = '';
/** Ended by the service: not reopened (`evicted`: until the tab is looked at again). */
let ended: 'signed_out' | 'evicted' | null = null;

const setConnected = (next: boolean) => {
  if (connected === next) return;
  connected = next;
  for (const listener of statusListeners) listener();
};

const dispatch = (event: LiveEvent) => {
  for (const listener of listeners) {
    try {
      listener(event);
    } catch (error) {
      console.error('live event listener failed', error);
    }
  }
};

function open() {
  if (source || typeof EventSource === 'undefined') return;
  ended = null;
  const stream = new EventSource(lastEventId ? `/api/live?last_event_id=${encodeURIComponent(lastEventId)}` : '/api/live', { withCredentials: true });
  source = stream;
  stream.onopen = () => {
    retries = 0;
    setConnected(true);
  };
  stream.onerror = () => {
    setConnected(false);
    // CONNECTING: the browser is reconnecting (and will resume with Last-Event-ID). CLOSED: it gave up (an answer that
    // was not a stream: 401, 404, 429): a new stream later, which cannot resume.
    if (stream.readyState !== EventSource.CLOSED) return;
    stream.close();
    source = null;
    const wait = RETRY_MS[Math.min(retries++, RETRY_MS.length - 1)];
    window.clearTimeout(retryTimer);
    retryTimer = window.setTimeout(() => users > 0 && open(), wait);
  };
  for (const type of EVENTS) {
    stream.addEventListener(type, (message) => {
      const { data: text, lastEventId: id } = message as MessageEvent;
      if (id) lastEventId = id;
      let data: any = null;
      try {
        data = text ? JSON.parse(text) : null;
      } catch {
        return;
      }
      dispatch({ type, data } as LiveEvent);
    });
  }
  stream.addEventListener('closed', (message) => {
    let reason = '';
    try {
      reason = JSON.parse((message as MessageEvent).data)?.reason ?? '';
    } catch {
      // An ending without a reason is an ending all the same.
    }
    stream.close();
    source = null;
    ended = reason === 'too_many_streams' ? 'evicted' : 'signed_out';
    setConnected(false);
  });
}

// A tab whose stream was given to a newer tab takes one back when the person comes back to it.
if (typeof document !== 'undefined') {
  document.addEventListener('visibilitychange', () => {
    if (document.visibilityState === 'visible' && ended === 'evicted' && users > 0) open();
  });
}

function close() {
  window.clearTimeout(retryTimer);
  source?.close();
  source = null;
  lastEventId = '';
  ended = null;
  retries = 0;
  setConnected(false);
}

/**
 * Holds the stream open while the returned function has not been called (the signed-in layout holds it). Closed a
 * moment after the last holder lets go: a remount (React's strict mode, a layout change) keeps the same stream.
 */
export function holdLiveStream(): () => void {
  users++;
  window.clearTimeout(closeTimer);
  if (ended !== 'evicted') open();
  return () => {
    users--;
    window.clearTimeout(closeTimer);
    closeTimer = window.setTimeout(() => users === 0 && close(), 1_000);
  };
}

/** Every event of the stream, until the returned function is called. */
export function onLiveEvent(listener: Listener): () => void {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export const isLiveConnected = () => connected;

export function onLiveStatus(listener: () => void): () => void {
  statusListeners.add(listener);
  return () => void statusListeners.delete(listener);
}

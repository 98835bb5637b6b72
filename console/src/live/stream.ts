// One server-sent-events stream per tab (GET /api/live), shared by whoever listens. The browser's EventSource
// reconnects by itself after a dropped connection and resends the last event's id (Last-Event-ID), so nothing is missed.
// A refused connection (signed out, too many streams, a service without the stream) closes it for good: it is opened
// again after a pause, as a fresh stream, and listeners are told to read everything again (`reset`), because the events
// in between are lost. While the stream is down, screens fall back to a slow poll (useLiveStatus).

export type Change = { resource: string; id?: string; action: 'created' | 'updated' | 'deleted' | 'bulk' };
export type LiveEvent =
  | { type: 'notification'; data: unknown }
  | { type: 'change'; data: Change }
  | { type: 'unread'; data: { unread: number } }
  | { type: 'reset'; data: null };
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
/** Whether the current stream followed one that was lost (its events in between are gone). */
let resumeLost = false;

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
  const stream = new EventSource('/api/live', { withCredentials: true });
  source = stream;
  stream.onopen = () => {
    retries = 0;
    setConnected(true);
    if (resumeLost) {
      resumeLost = false;
      dispatch({ type: 'reset', data: null });
    }
  };
  stream.onerror = () => {
    setConnected(false);
    // CONNECTING: the browser is reconnecting (and will resume with Last-Event-ID). CLOSED: it gave up (an answer that
    // was not a stream: 401, 404, 429): a new stream later, which cannot resume.
    if (stream.readyState !== EventSource.CLOSED) return;
    stream.close();
    source = null;
    resumeLost = true;
    const wait = RETRY_MS[Math.min(retries++, RETRY_MS.length - 1)];
    window.clearTimeout(retryTimer);
    retryTimer = window.setTimeout(() => users > 0 && open(), wait);
  };
  for (const type of EVENTS) {
    stream.addEventListener(type, (message) => {
      let data: any = null;
      try {
        data = (message as MessageEvent).data ? JSON.parse((message as MessageEvent).data) : null;
      } catch {
        return;
      }
      dispatch({ type, data } as LiveEvent);
    });
  }
}

function close() {
  window.clearTimeout(retryTimer);
  source?.close();
  source = null;
  resumeLost = false;
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
  open();
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

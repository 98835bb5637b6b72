import type { OutgoingHttpHeaders, ServerResponse } from 'node:http';
import { and, count, eq, inArray, isNull } from 'drizzle-orm';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { can, principalOf } from '../auth/guard.js';
import { clock } from '../clock.js';
import { CHANGE_LOG_RETENTION_MS, covers, parseSnapshot, type Snapshot, visibleIn } from '../data/changes.js';
import { ownersWith, recordScopeOf } from '../data/owners.js';
import { declaredResources, type Resource } from '../data/resource.js';
import { moduleAccess, notifications } from '../db/schema/index.js';
import { serviceUnavailable, unauthorized } from '../errors.js';
import { notificationItem } from '../modules/account/notification-item.js';
import { type Access, byProperty, ownedAmong, type Row, verdict } from './access.js';
import { encodePosition, parsePosition, type Position, snapshotText } from './positions.js';

/** Each app's hub, by its HTTP server (the route's plugin and the app around it share it): tests tune its intervals. */
const hubs = new WeakMap<object, LiveHub>();
export const liveHubOf = (app: FastifyInstance): LiveHub | undefined => hubs.get(app.server);

export type LiveOptions = {
  /** How often the change log is read while streams are open (ms). */
  pollMs: number;
  /** How often each stream gets a comment line, so proxies and clients know it is alive (ms). */
  heartbeatMs: number;
  /** Streams one user may hold open on this instance: one more closes their oldest. */
  perUser: number;
  /** At most this many changes are read at once; a burst of more is told as a `bulk` change of each resource. */
  batchMax: number;
};

/** A position older than this is not resumed (the log keeps a change an hour): the client is told to start over. */
const RESUME_WINDOW_MS = CHANGE_LOG_RETENTION_MS / 2;
/** A client that lets this much pile up unread is disconnected (it reconnects and resumes where it was). */
const MAX_BUFFERED_BYTES = 1 << 20;
/** A stream's principal is read again at least this often (a session's expiry, anything a missed notification changed). */
const ACCESS_MAX_AGE_MS = 60_000;
/** How long a client waits before reconnecting after losing the stream. */
const RETRY_MS = 2_000;
/** How long a client closed for holding too many streams waits before trying again (if it does not stop). */
const EVICTED_RETRY_MS = 60_000;
/** Notifications' own log: told to their user only, never as a `change`. */
const NOTIFICATIONS = 'notifications';

type Change = { id: number; xid: number; resource: string; rowId: string | null; before: Row | null; after: Row | null };
/**
 * Changes some snapshot `to` sees that `from` did not, by change-log id; or, for a burst too large to read, the
 * resources it changed (`bulk`). Events carry (`from`, `to`, the change's id) as their position.
 */
type Segment = { from: Snapshot; to: Snapshot; at: number; changes: Change[]; bulk?: string[] };

/** A change's rows (before, after, as there are) by property names; null for a bulk change. */
const rowsOf = (change: Change, resource: Resource): Row[] | null =>
  change.rowId === null ? null : [change.before, change.after].filter((row): row is Row => !!row).map((row) => byProperty(resource.table, row));

class LiveStream {
  access!: Promise<Access | null>;
  resolvedAt = 0;
  /** Its principal must be read again before it is told anything more. */
  stale = false;
  closed = false;
  lastId: string | undefined;
  /** Where it stands once everything up to now was dealt with (heartbeats carry it). */
  position: Position | undefined;
  /**
   * As its principal was last read: its session (or `token:<id>`), and whether its crm records are its department's
   * (anyone's move between departments changes them).
   */
  sessionId: string | undefined;
  byDepartment = false;

  constructor(readonly request: FastifyRequest, readonly raw: ServerResponse, readonly userId: string, readonly openedAt: number) {}

  send(event: string, data: unknown, id?: string) {
    this.write(`${id ? `id: ${id}\n` : ''}event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
    if (id) this.lastId = id;
  }

  write(text: string) {
    if (!this.closed) this.raw.write(text);
  }
}

/**
 * The live streams of this instance (`GET /api/live`), fed by one reader: while any stream is open it reads the
 * change log every `pollMs` (one statement, whatever the number of streams) and hands each stream the changes its
 * user may read, and their new notifications. The log is written by the database itself at commit (every writer,
 * every instance), and read by transaction snapshots, so a transaction committing late is still read, once.
 */
export class LiveHub {
  readonly options: LiveOptions;
  private readonly live = new Set<LiveStream>();
  /** Streams answered and waiting for the reader to start. */
  private readonly opening = new Set<LiveStream>();
  private waiting: { stream: LiveStream; position: Position }[] = [];
  /** What the reader has read up to: every change this snapshot sees has been handed out. */
  private snapshot: Snapshot | undefined;
  private at = 0;
  /** No stream is open: the reader is not reading, its snapshot is out of date. */
  private idle = true;
  private starting: Promise<void> | undefined;
  private timer: NodeJS.Timeout | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private stopped = false;
  private resources: Map<string, Resource> | undefined;
  private readonly watch = (change: { user: string } | { session: string } | null) => this.principalChanged(change);

  constructor(private readonly app: FastifyInstance, options: Partial<LiveOptions> = {}) {
    this.options = { pollMs: 250, heartbeatMs: 20_000, perUser: 5, batchMax: 5_000, ...options };
    app.principals.watchers.add(this.watch);
    hubs.set(app.server, this);
  }

  /** Streams open on this instance. */
  get size() {
    return this.live.size + this.waiting.length + this.opening.size;
  }

  private get streams(): LiveStream[] {
    return [...this.live, ...this.waiting.map((entry) => entry.stream), ...this.opening];
  }

  /** Opens the stream of a signed-in request (its guard passed), resuming after `lastEventId` when it names a position. */
  async open(request: FastifyRequest, reply: FastifyReply, lastEventId: string | undefined): Promise<void> {
    const principal = await principalOf(this.app, request);
    if (!principal) throw unauthorized();
    if (this.stopped) throw serviceUnavailable('The service is shutting down: reconnect in a moment');
    const stream = new LiveStream(request, reply.raw, principal.user.id, Date.now());
    if (!(await this.resolve(stream))) throw unauthorized();
    const mine = this.streams.filter((other) => other.userId === stream.userId).sort((a, b) => a.openedAt - b.openedAt);
    while (mine.length >= this.options.perUser) this.close(mine.shift()!, 'too_many_streams');

    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      ...(reply.getHeaders() as OutgoingHttpHeaders),
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-accel-buffering': 'no',
      connection: 'keep-alive',
    });
    raw.on('close', () => this.drop(stream));
    raw.on('error', () => this.drop(stream));
    stream.write(`retry: ${RETRY_MS}\n: live\n\n`);
    this.opening.add(stream);
    this.counted();
    try {
      await this.ensureRunning();
    } catch (err) {
      // The database did not answer: the client tries again after `retry`.
      this.app.log.warn({ err }, 'live stream: the change log could not be read');
      return this.close(stream);
    } finally {
      this.opening.delete(stream);
    }
    if (stream.closed) return;
    if (this.stopped) return this.close(stream);

    // From here to joining the reader's streams nothing is awaited: no read falls between the two.
    const position = parsePosition(lastEventId);
    if (!position) {
      // A new stream starts now: its first position, for a client that reconnects before any event.
      stream.position = { at: this.at, to: this.snapshot! };
      this.sendPosition(stream);
      this.live.add(stream);
    } else if (clock.now().getTime() - position.at > RESUME_WINDOW_MS) {
      this.reset(stream, 'expired');
    } else {
      this.waiting.push({ stream, position });
    }
    this.counted();
  }

  /** Shutdown: every stream ends (the server's close waits for none), the reader stops. */
  async closeAll(): Promise<void> {
    this.stopped = true;
    this.app.principals.watchers.delete(this.watch);
    clearTimeout(this.timer);
    clearInterval(this.heartbeat);
    for (const stream of this.streams) this.close(stream);
    await this.ticking;
  }

  private counted() {
    this.app.metrics?.liveStreams.set(this.size);
  }

  /** Reads the stream's principal again: null when it has signed out, been revoked or lost its account. */
  private resolve(stream: LiveStream): Promise<Access | null> {
    const { request } = stream;
    request.principalPromise = undefined;
    request.ownersPromise = undefined;
    stream.stale = false;
    stream.resolvedAt = Date.now();
    stream.access = (async (): Promise<Access | null> => {
      const principal = await principalOf(this.app, request);
      if (!principal || principal.user.id !== stream.userId) return null;
      // The session's principal may be cached; what it may read is read afresh, so a stream never runs on an old scope.
      // An API token's permissions are its own (they are not the user's module access).
      const { db } = this.app.database;
      const [permissions, recordScope] = await Promise.all([
        principal.apiToken ? principal.permissions : db.select({ module: moduleAccess.module, can_read: moduleAccess.can_read, can_write: moduleAccess.can_write, can_delete: moduleAccess.can_delete })
          .from(moduleAccess).where(eq(moduleAccess.user_id, principal.user.id)),
        recordScopeOf(db, principal.user.id),
      ]);
      const owners = await ownersWith(db, principal.user.id, recordScope);
      const reads = permissions.filter((p) => p.can_read).map((p) => p.module);
      stream.sessionId = principal.session.id;
      stream.byDepartment = recordScope.scope === 'department';
      return {
        userId: principal.user.id,
        expiresAt: principal.session.expiresAt.getTime(),
        modules: new Set(reads),
        owners,
        everyCrmRecord: (owners === undefined && reads.includes('crm')) || can({ ...principal, permissions }, ['iam'], 'can_write'),
      };
    })().catch((err: unknown) => {
      // Cannot tell what the user may read now: the stream ends, and the client reconnects and resumes.
      this.app.log.warn({ err }, 'live stream: its principal could not be read again');
      return null;
    });
    return stream.access;
  }

  private principalChanged(change: { user: string } | { session: string } | null) {
    for (const stream of this.streams) {
      if (change === null) stream.stale = true;
      else if ('user' in change ? stream.userId === change.user : stream.sessionId === change.session) void this.recheck(stream);
    }
  }

  /** Reads the principal again now; ends the stream when it is gone. */
  private async recheck(stream: LiveStream) {
    const access = await this.resolve(stream);
    if (!access) this.close(stream, 'signed_out');
  }

  private async ensureRunning() {
    if (this.idle) {
      await (this.starting ??= (async () => {
        const { rows } = await this.app.database.execute('select pg_current_snapshot()::text as snapshot', []);
        this.snapshot = parseSnapshot(String(rows[0].snapshot));
        this.at = clock.now().getTime();
        this.idle = false;
      })().finally(() => (this.starting = undefined)));
    }
    this.schedule();
    if (!this.heartbeat && !this.stopped) this.heartbeat = setInterval(() => this.beat(), this.options.heartbeatMs);
  }

  private schedule() {
    if (this.timer || this.ticking || this.stopped) return;
    if (!this.size) {
      this.idle = true;
      clearInterval(this.heartbeat);
      this.heartbeat = undefined;
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.ticking = this.tick()
        .catch((err: unknown) => this.app.log.error({ err }, 'live streams: reading the change log failed'))
        .finally(() => {
          this.ticking = undefined;
          this.schedule();
        });
    }, this.options.pollMs);
  }

  /** One read of the log: what committed since the last, to every live stream; then the streams resuming catch up. */
  private async tick() {
    const resuming = this.waiting.splice(0);
    const from = this.snapshot!;
    let read: Awaited<ReturnType<LiveHub['read']>>;
    try {
      read = await this.read({ at: this.at, to: from });
    } catch (err) {
      this.waiting.unshift(...resuming);
      throw err;
    }
    const targets = [...this.live];
    this.snapshot = read.snapshot;
    this.at = clock.now().getTime();
    const segment: Segment = { from, to: read.snapshot, at: this.at, changes: read.changes, ...(read.bulk ? { bulk: read.bulk } : {}) };
    // A stream that could not be told what it may read is ended: its client reconnects and resumes after its last event.
    await this.deliver(targets, [segment]).catch((err: unknown) => this.failed(err, targets));
    await Promise.all(resuming.map(({ stream, position }) => this.resume(stream, position, read.snapshot).catch((err: unknown) => this.failed(err, [stream]))));
  }

  private failed(err: unknown, streams: LiveStream[]) {
    this.app.log.error({ err }, 'live streams: handing out changes failed; the streams concerned are closed to resume');
    for (const stream of streams) this.close(stream);
  }

  /**
   * The changes committed after `position` that the current statement sees: those `position.to` did not see, and of
   * those it did but `position.from` did not, the ones after `position.after`. At most `batchMax`; more: `bulk` lists
   * the resources they changed.
   */
  private async read(position: Position): Promise<{ snapshot: Snapshot; changes: Change[]; bulk?: string[] }> {
    // What a snapshot did not see: transactions from its xmax on, and those running when it was taken. Read as such (not
    // as `xid >= xmin`), each part stays a short range of the (resource, xid) index even while one long transaction
    // holds xmin back and the log grows behind it.
    const values: unknown[] = [[...this.resourceMap().keys(), NOTIFICATIONS].join(',')];
    const param = (value: unknown) => `$${values.push(value)}`;
    const ofResources = 'c.resource = any(string_to_array($1, \',\'))';
    const unseenBy = (snapshot: Snapshot) => [
      `c.xid >= ${param(String(snapshot.xmax))}::xid8`,
      ...(snapshot.running.size ? [`c.xid = any(string_to_array(${param([...snapshot.running].join(','))}, ',')::xid8[])`] : []),
    ];
    const parts = unseenBy(position.to).map((unseen) => `${ofResources} and ${unseen}`);
    if (position.from) {
      // The rest of a batch: what `from` did not see and `to` did, after the last change sent.
      const seen = `pg_visible_in_snapshot(c.xid, ${param(snapshotText(position.to))}::pg_snapshot) and c.id > ${param(String(position.after))}::bigint`;
      parts.push(...unseenBy(position.from).map((unseen) => `${ofResources} and ${unseen} and ${seen}`));
    }
    const columns = 'c.id, c.xid, c.resource, c.row_id, c.before, c.after';
    const limit = param(this.options.batchMax);
    const { rows } = await this.app.database.execute(`select pg_current_snapshot()::text as snapshot, (
      select coalesce(json_agg(json_build_array(c.id, c.xid::text, c.resource, c.row_id, c.before, c.after)), '[]')::text
      from (${parts.map((where) => `(select ${columns} from change_log c where ${where} limit ${limit})`).join(' union all ')}) c) as changes`, values);
    const snapshot = parseSnapshot(String(rows[0].snapshot));
    const changes = (JSON.parse(String(rows[0].changes)) as [number, string, string, string | null, Row | null, Row | null][])
      .map(([id, xid, resource, rowId, before, after]) => ({ id: Number(id), xid: Number(xid), resource, rowId, before, after }))
      .sort((a, b) => a.id - b.id);
    if (changes.length < this.options.batchMax) return { snapshot, changes };
    values.pop();
    const found = await this.app.database.execute(`select distinct c.resource from (${parts.map((where) => `(select c.resource from change_log c where ${where})`).join(' union all ')}) c`, values);
    return { snapshot, changes: [], bulk: found.rows.map((row) => String(row.resource)) };
  }

  /** A stream resuming from `position`: what it missed up to `upTo` (the reader's snapshot), then it is live. */
  private async resume(stream: LiveStream, position: Position, upTo: Snapshot) {
    if (stream.closed) return;
    if (!covers(upTo, position.to)) return this.reset(stream, 'unknown');
    const read = await this.read(position);
    if (stream.closed) return;
    if (read.bulk) return this.reset(stream, 'too_many_changes');
    // Those committed after `upTo` come with the reader's next read.
    const missed = read.changes.filter((change) => visibleIn(change.xid, upTo));
    const segments: Segment[] = [];
    if (position.from) segments.push({ from: position.from, to: position.to, at: position.at, changes: missed.filter((c) => visibleIn(c.xid, position.to)) });
    segments.push({ from: position.to, to: upTo, at: this.at, changes: missed.filter((c) => !visibleIn(c.xid, position.to)) });
    await this.deliver([stream], segments);
    if (!stream.closed) this.live.add(stream);
  }

  private reset(stream: LiveStream, reason: string) {
    stream.position = { at: this.at, to: this.snapshot! };
    stream.send('reset', { reason }, encodePosition(stream.position));
    this.live.add(stream);
  }

  private resourceMap(): Map<string, Resource> {
    return (this.resources ??= new Map(declaredResources().map((resource) => [resource.name, resource])));
  }

  /** Hands `segments` to each of `targets`: each change its user may read, their notifications, their unread count. */
  private async deliver(targets: LiveStream[], segments: Segment[]) {
    const resources = this.resourceMap();
    const changes = segments.flatMap((segment) => segment.changes);
    if (!changes.length && !segments.some((segment) => segment.bulk?.length)) {
      for (const stream of targets) stream.position = { at: segments.at(-1)!.at, to: segments.at(-1)!.to };
      return;
    }
    this.staleAfter(changes, targets);
    const accesses = await Promise.all(targets.map(async (stream) => ({ stream, access: await (stream.stale ? this.resolve(stream) : stream.access) })));

    type Planned = { stream: LiveStream; access: Access; told: Map<Change, boolean | { parents: string[] }> };
    const plans: Planned[] = [];
    for (const { stream, access } of accesses) {
      if (stream.closed) continue;
      if (!access || access.expiresAt <= Date.now()) {
        this.close(stream, 'signed_out');
        continue;
      }
      const told = new Map<Change, boolean | { parents: string[] }>();
      for (const change of changes) {
        const resource = resources.get(change.resource);
        if (change.resource === NOTIFICATIONS) told.set(change, change.rowId === null || (change.after ?? change.before)?.user_id === access.userId);
        else if (resource) told.set(change, verdict(access, resource, rowsOf(change, resource)));
      }
      plans.push({ stream, access, told });
    }
    if (!plans.length) return;

    // Records that are the user's through a parent (a lead's activity): one query per parent and set of owners.
    const asked = new Map<string, { parent: Resource; owners: string[]; ids: Set<string>; owned?: Set<string> }>();
    const keyOf = (parent: Resource, owners: string[]) => `${parent.name}|${owners.join(',')}`;
    for (const { access, told } of plans) {
      for (const [change, answer] of told) {
        if (typeof answer !== 'object') continue;
        const parent = resources.get(change.resource)!.ownershipThrough!.parent;
        const key = keyOf(parent, access.owners!);
        const entry = asked.get(key) ?? { parent, owners: access.owners!, ids: new Set<string>() };
        answer.parents.forEach((id) => entry.ids.add(id));
        asked.set(key, entry);
      }
    }
    await Promise.all([...asked.values()].map(async (entry) => {
      entry.owned = await ownedAmong(this.app.database.db, entry.parent, entry.owners, [...entry.ids]);
    }));

    // New notifications of the users listening here, read whole (the log leaves their text out); unread counts.
    const listening = new Set(plans.map((plan) => plan.access.userId));
    const notes = changes.filter((change) => change.resource === NOTIFICATIONS);
    const fresh = notes.filter((change) => change.rowId && !change.before && listening.has(String(change.after?.user_id))).map((change) => change.rowId!);
    const counting = notes.some((change) => change.rowId === null) ? [...listening]
      : [...new Set(notes.map((change) => String((change.after ?? change.before)?.user_id)))].filter((id) => listening.has(id));
    const db = this.app.database.db;
    const [rows, counts] = await Promise.all([
      fresh.length ? db.select().from(notifications).where(inArray(notifications.id, fresh)) : [],
      counting.length
        ? db.select({ user: notifications.user_id, unread: count() }).from(notifications)
          .where(and(inArray(notifications.user_id, counting), isNull(notifications.read_at))).groupBy(notifications.user_id)
        : [],
    ]);
    const byId = new Map(rows.map((row) => [row.id, row]));
    const unread = new Map<string, number>(counting.map((id) => [id, 0]));
    for (const row of counts) unread.set(row.user, Number(row.unread));

    for (const { stream, access, told } of plans) {
      if (stream.closed) continue;
      let notified = false;
      for (const segment of segments) {
        const idOf = (change: Change) => encodePosition({ at: segment.at, from: segment.from, to: segment.to, after: change.id });
        const end: Position = { at: segment.at, to: segment.to };
        for (const change of segment.changes) {
          const answer = told.get(change);
          const owned = typeof answer === 'object' && asked.get(keyOf(resources.get(change.resource)!.ownershipThrough!.parent, access.owners!))?.owned;
          const allowed = typeof answer === 'object' ? answer.parents.some((id) => owned && owned.has(id)) : answer;
          if (!allowed) continue;
          if (change.resource === NOTIFICATIONS) {
            notified = true;
            const row = change.rowId && !change.before ? byId.get(change.rowId) : undefined;
            if (row && row.user_id === access.userId) stream.send('notification', notificationItem(row), idOf(change));
            continue;
          }
          const action = change.rowId === null ? 'bulk' : !change.before ? 'created' : !change.after ? 'deleted' : 'updated';
          stream.send('change', change.rowId === null ? { resource: change.resource, action } : { resource: change.resource, id: change.rowId, action }, idOf(change));
        }
        for (const name of segment.bulk ?? []) {
          const resource = resources.get(name);
          if (name === NOTIFICATIONS) notified = true;
          else if (resource && verdict(access, resource, null) === true) stream.send('change', { resource: name, action: 'bulk' }, encodePosition(end));
        }
        stream.position = end;
      }
      if (notified && unread.has(access.userId)) stream.send('unread', { unread: unread.get(access.userId) }, encodePosition(stream.position!));
      if (stream.raw.writableLength > MAX_BUFFERED_BYTES) this.close(stream);
    }
  }

  /**
   * Changes that alter what users may read (their module access, their department, a colleague's move between
   * departments): the streams concerned read their principal again before they are told anything more.
   */
  private staleAfter(changes: Change[], targets: LiveStream[]) {
    for (const change of changes) {
      if (change.resource === 'module_access') {
        const users = new Set([change.before?.user_id, change.after?.user_id]);
        for (const stream of targets) if (change.rowId === null || users.has(stream.userId)) stream.stale = true;
      } else if (change.resource === 'users') {
        const moved = change.rowId === null || change.before?.department_id !== change.after?.department_id;
        for (const stream of targets) if (stream.userId === change.rowId || (moved && stream.byDepartment)) stream.stale = true;
      }
    }
  }

  /** Every stream: a comment, the position reached, and a fresh look at principals read long ago. */
  private beat() {
    const now = Date.now();
    for (const stream of [...this.live]) {
      if (stream.stale || now - stream.resolvedAt > ACCESS_MAX_AGE_MS) void this.recheck(stream);
      const id = stream.position && encodePosition(stream.position);
      stream.write(id && id !== stream.lastId ? `: heartbeat\nid: ${id}\n\n` : ': heartbeat\n\n');
      if (id) stream.lastId = id;
    }
  }

  private sendPosition(stream: LiveStream) {
    const id = encodePosition(stream.position!);
    stream.write(`id: ${id}\n\n`);
    stream.lastId = id;
  }

  /** Ends a stream, saying why when it is not the client's doing. */
  private close(stream: LiveStream, reason?: 'too_many_streams' | 'signed_out') {
    if (stream.closed) return;
    if (reason) stream.write(`${reason === 'too_many_streams' ? `retry: ${EVICTED_RETRY_MS}\n` : ''}event: closed\ndata: ${JSON.stringify({ reason })}\n\n`);
    stream.raw.end();
    this.drop(stream);
  }

  private drop(stream: LiveStream) {
    stream.closed = true;
    this.live.delete(stream);
    this.opening.delete(stream);
    this.waiting = this.waiting.filter((entry) => entry.stream !== stream);
    this.counted();
  }
}

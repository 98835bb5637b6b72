import { covers, parseSnapshot, type Snapshot } from '../data/changes.js';

/**
 * Where a stream stands in the change log, as its events' `id:` carry it (the client sends the last one back as
 * `Last-Event-ID`). Transactions commit in an order their ids do not follow, so a position is a snapshot, not a
 * number: every change `to` sees has been dealt with (sent, or not the user's to see). A position inside a batch also
 * names the batch's start (`from`) and the last change sent of it (`after`): of the changes `to` sees and `from` does
 * not, those with a change-log id up to `after` are dealt with. `at` (ms) says when it was written: the log keeps a
 * change an hour, so an older position cannot be resumed.
 */
export type Position = { at: number; to: Snapshot; from?: Snapshot; after?: number };

const SNAPSHOT = /^\d{1,19}:\d{1,19}:(?:\d{1,19}(?:,\d{1,19})*)?$/;
const MAX_RUNNING = 10_000;

export const snapshotText = (snapshot: Snapshot) => `${snapshot.xmin}:${snapshot.xmax}:${[...snapshot.running].sort((a, b) => a - b).join(',')}`;

export function encodePosition(position: Position): string {
  const parts = [`v1`, position.at.toString(36), snapshotText(position.to)];
  if (position.from && position.after !== undefined) parts.push(snapshotText(position.from), String(position.after));
  return parts.join(';');
}

/** A well-formed snapshot (xmin ≤ running < xmax); undefined otherwise. */
function readSnapshot(text: string | undefined): Snapshot | undefined {
  if (!text || !SNAPSHOT.test(text)) return undefined;
  const snapshot = parseSnapshot(text);
  if (!Number.isSafeInteger(snapshot.xmax) || snapshot.xmin > snapshot.xmax || snapshot.running.size > MAX_RUNNING) return undefined;
  for (const xid of snapshot.running) if (!Number.isSafeInteger(xid) || xid < snapshot.xmin || xid >= snapshot.xmax) return undefined;
  return snapshot;
}

/** The position a `Last-Event-ID` names; undefined for anything this service did not write (treated as none). */
export function parsePosition(text: string | undefined): Position | undefined {
  if (!text || text.length > 200_000) return undefined;
  const [version, at, to, from, after, ...rest] = text.split(';');
  if (version !== 'v1' || rest.length || !/^[0-9a-z]{1,11}$/.test(at ?? '')) return undefined;
  const toSnapshot = readSnapshot(to);
  if (!toSnapshot) return undefined;
  const position: Position = { at: parseInt(at, 36), to: toSnapshot };
  if (from === undefined && after === undefined) return position;
  const fromSnapshot = readSnapshot(from);
  if (!fromSnapshot || !/^\d{1,15}$/.test(after ?? '') || !covers(toSnapshot, fromSnapshot)) return undefined;
  return { ...position, from: fromSnapshot, after: Number(after) };
}

import { WireReader, varint } from '../etcd/protobuf.js';
import type { WatchedEvent } from '../etcd/watch-grpc.js';

/**
 * The change log of a continuous backup: every revision after a full snapshot, in chunks stored beside the
 * snapshots as `<base>.changes/<from>-<to>-<confirmedAtMs>` (numbers zero-padded, so listing order is
 * revision order). A chunk holds every revision from `from` to `to`, both included: etcd confirmed (a
 * watch progress answer) that nothing up to `to` was left unsent, and every write the cluster acknowledged
 * before `confirmedAtMs` is in it or an earlier chunk (a linearizable read then answered no later revision;
 * a chunk stored without that confirmation carries the previous chunk's time). Its body is a
 * run of records, one per revision: the revision, when the operator received it (ms), the number of its
 * events, then each event as etcd encoded it (mvccpb.Event), length-prefixed; all as protobuf varints.
 */

/** One source revision: its events (all written by one transaction) and when they were seen. */
export interface LoggedRevision {
  revision: number;
  atMs: number;
  events: Buffer[];
}

export interface ChunkName {
  name: string;
  from: number;
  to: number;
  confirmedAtMs: number;
}

const REVISION_DIGITS = 20;
const TIME_DIGITS = 15;
const pad = (n: number, digits: number): string => String(n).padStart(digits, '0');

export const changeLogPrefix = (base: string): string => `${base}.changes/`;

export function chunkName(base: string, from: number, to: number, confirmedAtMs: number): string {
  return `${changeLogPrefix(base)}${pad(from, REVISION_DIGITS)}-${pad(to, REVISION_DIGITS)}-${pad(confirmedAtMs, TIME_DIGITS)}`;
}

const CHUNK = /^(\d+)-(\d+)-(\d+)$/;

/** The chunks among `names` (a listing of the change log's prefix), in revision order. */
export function chunksOf(names: readonly string[], base: string): ChunkName[] {
  const prefix = changeLogPrefix(base);
  return names.flatMap((name) => {
    const m = name.startsWith(prefix) ? CHUNK.exec(name.slice(prefix.length)) : null;
    return m ? [{ name, from: Number(m[1]), to: Number(m[2]), confirmedAtMs: Number(m[3]) }] : [];
  }).sort((a, b) => a.from - b.from || a.to - b.to);
}

/**
 * A reading of the cluster's clock, taken by the change log before a progress request: a linearizable read began
 * at `startMs` and answered `revision` by `doneMs`. So every write acknowledged before `startMs` is at or before
 * `revision`, every revision after it was committed after `startMs`, and every revision up to it by `doneMs`.
 * etcd's events carry no time; these readings are what a time is mapped to a revision by.
 */
export interface ClockReading { startMs: number; doneMs: number; revision: number }

/** A chunk's contents: its revisions, and the clock readings taken since the chunk before. */
export interface ChunkBody { revisions: LoggedRevision[]; clock: ClockReading[] }

/** A record that starts with revision 0 (no revision has it) is a clock reading: its start, end and revision follow. */
const CLOCK_RECORD = 0;

export function encodeChunk(revisions: readonly LoggedRevision[], clock: readonly ClockReading[] = []): Buffer {
  const parts: Buffer[] = [];
  for (const r of revisions) {
    parts.push(varint(r.revision), varint(r.atMs), varint(r.events.length));
    for (const e of r.events) parts.push(varint(e.length), e);
  }
  for (const c of clock) parts.push(varint(CLOCK_RECORD), varint(c.startMs), varint(c.doneMs), varint(c.revision));
  return Buffer.concat(parts);
}

/** The records of a chunk's body; a body cut off is an error, never a shorter log. */
export function decodeChunk(body: Buffer): ChunkBody {
  const revisions: LoggedRevision[] = [];
  const clock: ClockReading[] = [];
  const r = new WireReader(body);
  while (!r.done) {
    const revision = r.varint();
    if (revision === CLOCK_RECORD) {
      clock.push({ startMs: r.varint(), doneMs: r.varint(), revision: r.varint() });
      continue;
    }
    const atMs = r.varint();
    const count = r.varint();
    const events: Buffer[] = [];
    for (let e = 0; e < count; e++) events.push(r.bytes(r.varint()));
    revisions.push({ revision, atMs, events });
  }
  return { revisions, clock };
}

/** Groups watched events by revision, in order, stamped with when they arrived. */
export function byRevision(events: readonly WatchedEvent[], atMs: number, into: LoggedRevision[] = []): LoggedRevision[] {
  for (const e of events) {
    const last = into[into.length - 1];
    if (last?.revision === e.revision) last.events.push(e.raw);
    else into.push({ revision: e.revision, atMs, events: [e.raw] });
  }
  return into;
}

/** A stretch of revisions (one the log does not hold, or one it does). */
export interface Hole { from: number; to: number }

/** The holes in the chunks' coverage from `from` through `to` (none: every revision there is in a chunk). */
export function holes(chunks: readonly ChunkName[], from: number, to: number): Hole[] {
  const found: Hole[] = [];
  let cursor = from;
  for (const c of chunks) {
    if (cursor > to) break;
    if (c.to < cursor) continue;
    if (c.from > cursor) found.push({ from: cursor, to: Math.min(c.from - 1, to) });
    cursor = Math.max(cursor, c.to + 1);
  }
  if (cursor <= to) found.push({ from: cursor, to });
  return found;
}

/** The chunks holding any revision from `from` through `to`. */
export const chunksFor = (chunks: readonly ChunkName[], from: number, to: number): ChunkName[] => chunks.filter((c) => c.to >= from && c.from <= to);

export interface SnapshotAt { name: string; revision: number }

export type PointInTimePlan =
  | { snapshot: SnapshotAt; chunks: ChunkName[] }
  | { refused: string };

/**
 * How to build the store as it was at `target`: the newest full snapshot at or before it whose change log
 * holds every revision after it up to the target. (A snapshot is named by the revision etcd reported just
 * before it began, so it may hold a few revisions more; replay starts after what it really holds.)
 */
export function pointInTimePlan(snapshots: readonly SnapshotAt[], chunks: readonly ChunkName[], target: number): PointInTimePlan {
  const candidates = snapshots.filter((s) => s.revision <= target).sort((a, b) => b.revision - a.revision);
  if (candidates.length === 0) {
    const oldest = Math.min(...snapshots.map((s) => s.revision));
    return { refused: snapshots.length === 0 ? 'there is no full snapshot to start from' : `revision ${target} is before the oldest full snapshot (revision ${oldest})` };
  }
  let nearest: Hole[] = [];
  for (const snapshot of candidates) {
    const missing = holes(chunks, snapshot.revision + 1, target);
    if (missing.length === 0) return { snapshot, chunks: chunksFor(chunks, snapshot.revision + 1, target) };
    if (nearest.length === 0) nearest = missing;
  }
  const held = chunks.length === 0 ? 'the change log is empty' : `the change log holds ${describeCoverage(chunks)}`;
  return { refused: `revision ${target} cannot be rebuilt: revisions ${nearest.map((h) => (h.from === h.to ? `${h.from}` : `${h.from}-${h.to}`)).join(', ')} are missing after the nearest snapshot (${held})` };
}

/** The unbroken stretches of revisions the chunks hold, in order. */
export function coveredRuns(chunks: readonly ChunkName[]): Hole[] {
  const runs: Hole[] = [];
  for (const c of chunks) {
    const last = runs[runs.length - 1];
    if (last && c.from <= last.to + 1) last.to = Math.max(last.to, c.to);
    else runs.push({ from: c.from, to: c.to });
  }
  return runs;
}

/** "100-250, 300-420": the stretches the chunks hold. */
const describeCoverage = (chunks: readonly ChunkName[]): string => coveredRuns(chunks).map((r) => `${r.from}-${r.to}`).join(', ');

/** How far apart the clock readings around a time may be for it to be pinned to a revision. */
export const PIN_BOUND_MS = 10_000;

/** How far from a time, by their names, the chunks that may hold the clock readings around it are looked for. */
const READINGS_SPAN_MS = 120_000;

/** A time mapped to a revision, or why it cannot be. */
export type TimePoint = { revision: number } | { refused: string };

const iso = (ms: number): string => new Date(ms).toISOString();

/**
 * The revision the store was at, at `atMs`: the newest revision etcd had certainly committed by then. A revision
 * was committed by the time the operator received it, and by the end of a clock reading that covered it; one
 * past a reading that began after `atMs` was committed after it. When revisions were written between the last
 * reading before the time and the first after it, and those readings are more than PIN_BOUND_MS apart (the
 * operator was stopped, the cluster or the store was out of reach, or a gap), the time cannot be pinned and is
 * refused, and so is a time with no reading near it (a log written before readings were kept).
 */
export async function revisionAt(chunks: readonly ChunkName[], atMs: number, read: (chunk: ChunkName) => Promise<ChunkBody>): Promise<TimePoint> {
  const last = chunks[chunks.length - 1];
  if (!last) return { refused: 'the change log is empty' };
  // A reading is stored with the first chunk stored after it, which is named for the confirmation it stores: later
  // than the reading, or earlier by as long as the store held the log up. The chunks named within READINGS_SPAN_MS
  // of the time (and the two on either side) hold the readings around it.
  const found = chunks.findIndex((c) => c.confirmedAtMs >= atMs);
  const index = found === -1 ? chunks.length - 1 : found;
  const near = chunks.filter((c, i) => Math.abs(i - index) <= 2 || Math.abs(c.confirmedAtMs - atMs) <= READINGS_SPAN_MS);
  const bodies = await Promise.all(near.map(read));
  const received = bodies.flatMap((b) => b.revisions);
  const clock = bodies.flatMap((b) => b.clock);
  const receivedBy = received.filter((r) => r.atMs <= atMs).reduce((n, r) => Math.max(n, r.revision), 0);
  const firstHeld = Math.min(...chunks.map((c) => c.from));
  // No reading near the time: a log written before readings were kept, or the cluster could not be read then.
  // When the operator happened to read an event is no clock (a slow store, a restart delay it by minutes).
  if (clock.length === 0) return { refused: `the change log has no reading of the cluster's revision near ${iso(atMs)} (written by an earlier version, or the cluster could not be read then); choose a revision` };
  const doneBefore = clock.filter((c) => c.doneMs <= atMs).sort((a, b) => a.doneMs - b.doneMs).at(-1);
  const startedAfter = clock.filter((c) => c.startMs >= atMs).sort((a, b) => a.startMs - b.startMs)[0];
  const surely = Math.max(doneBefore?.revision ?? 0, receivedBy);
  if (surely < firstHeld - 1 || (!doneBefore && receivedBy === 0)) return { refused: `the change log starts after ${iso(atMs)}` };
  if (!startedAfter) {
    // After the last reading: pinned only within the bound of the last reading before the time.
    const lastDone = doneBefore?.doneMs ?? 0;
    if (atMs - lastDone > PIN_BOUND_MS) return { refused: `the change log is confirmed up to ${iso(lastDone)}; ${iso(atMs)} is later than that by more than ${PIN_BOUND_MS / 1000} s (choose a revision, or an earlier time)` };
    return { revision: surely };
  }
  if (startedAfter.revision <= surely) return { revision: surely };
  const from = doneBefore?.doneMs;
  if (from === undefined || startedAfter.startMs - from > PIN_BOUND_MS) {
    const missing = holes(chunks, surely + 1, startedAfter.revision);
    return {
      refused: `${iso(atMs)} cannot be pinned to a revision: revisions ${surely + 1}-${startedAfter.revision} were written ${from === undefined ? `before ${iso(startedAfter.startMs)}` : `between ${iso(from)} and ${iso(startedAfter.startMs)}`}, ` +
        `and the log has no reading of the cluster in between (the operator stopped, or the cluster or the store out of reach)${missing.length > 0 ? `; ${missing.map((h) => `${h.from}-${h.to}`).join(', ')} are not in the log at all` : ''}; choose a revision, or a time outside that stretch`,
    };
  }
  return { revision: surely };
}

/** Chunks no kept snapshot needs: every revision in them is at or before the oldest kept snapshot's. */
export const prunableChunks = (chunks: readonly ChunkName[], oldestKeptRevision: number): ChunkName[] => chunks.filter((c) => c.to <= oldestKeptRevision);

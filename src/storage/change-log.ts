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

export function encodeChunk(revisions: readonly LoggedRevision[]): Buffer {
  const parts: Buffer[] = [];
  for (const r of revisions) {
    parts.push(varint(r.revision), varint(r.atMs), varint(r.events.length));
    for (const e of r.events) parts.push(varint(e.length), e);
  }
  return Buffer.concat(parts);
}

/** The records of a chunk's body; a body cut off is an error, never a shorter log. */
export function decodeChunk(body: Buffer): LoggedRevision[] {
  const out: LoggedRevision[] = [];
  const r = new WireReader(body);
  while (!r.done) {
    const revision = r.varint();
    const atMs = r.varint();
    const count = r.varint();
    const events: Buffer[] = [];
    for (let e = 0; e < count; e++) events.push(r.bytes(r.varint()));
    out.push({ revision, atMs, events });
  }
  return out;
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

/**
 * The revision the store was at, at `atMs`, as the log saw it: the last revision received by then. `read`
 * opens a chunk. Undefined when the log starts after that time.
 */
export async function revisionAt(chunks: readonly ChunkName[], atMs: number, read: (chunk: ChunkName) => Promise<LoggedRevision[]>): Promise<number | undefined> {
  // Chunks are confirmed in order: the first confirmed at or after the time holds its last revision, or the one before does.
  const index = chunks.findIndex((c) => c.confirmedAtMs >= atMs);
  if (index === -1) return chunks[chunks.length - 1]?.to;
  const chunk = chunks[index];
  if (!chunk) return undefined;
  const seen = (await read(chunk)).filter((r) => r.atMs <= atMs);
  const last = seen[seen.length - 1];
  if (last) return last.revision;
  const before = chunks[index - 1];
  return before && before.to === chunk.from - 1 ? before.to : undefined;
}

/** Chunks no kept snapshot needs: every revision in them is at or before the oldest kept snapshot's. */
export const prunableChunks = (chunks: readonly ChunkName[], oldestKeptRevision: number): ChunkName[] => chunks.filter((c) => c.to <= oldestKeptRevision);

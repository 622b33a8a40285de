import type { Logger } from '../../runtime/log.js';
import type { EtcdClient, TxnCompare, TxnOp } from '../../etcd/client.js';
import { EtcdError } from '../../etcd/client.js';
import { compactedAway } from '../../etcd/etcd-error.js';
import { decodeEvent } from '../../etcd/watch-grpc.js';
import type { ChangeEvent } from '../../etcd/watch-grpc.js';
import { MAX_TXN_OPS, deleteRuns, eventOps, revisionGuard, sendsAfter } from './revision-ops.js';
import type { LoggedRevision } from './revision-ops.js';
import { chunksFor, decodeChunk } from '../../storage/change-log.js';
import type { ChunkBody, ChunkName } from '../../storage/change-log.js';
import { unseal } from '../../storage/sealed.js';
import type { KeyRing } from '../../storage/sealed.js';
import type { BackupStorage } from '../../storage/storage.js';
import { keyRevision, sourceRevisionOf, storeRevisionOf } from './bumped-revisions.js';
import type { RevisionShift } from './bumped-revisions.js';

/** A point-in-time restore that cannot go on: the reason says why, for the EtcdRestore's condition. */
export class ReplayError extends Error {
  constructor(readonly reason: 'SnapshotPastTarget' | 'ChangeLogIncomplete' | 'WrittenDuringRestore' | 'RevisionTooLarge' | 'ReplayRefused' | 'StoreCompacted', message: string) {
    super(message);
    this.name = 'ReplayError';
  }
}

export interface ChangeLogSource {
  storage: BackupStorage;
  keys: KeyRing;
}

/** A chunk's revisions and clock readings: its bytes checked against the sha256 stored beside it, opened with its key, decoded. */
export async function readChunk(s: ChangeLogSource, chunk: ChunkName): Promise<ChunkBody> {
  const parts: Buffer[] = [];
  for await (const part of unseal(s.storage.get(chunk.name), s.keys, chunk.name)) parts.push(part);
  const body = decodeChunk(Buffer.concat(parts));
  const { revisions } = body;
  const held = revisions.map((r) => r.revision);
  if (held.length !== chunk.to - chunk.from + 1 || held.some((r, i) => r !== chunk.from + i)) {
    throw new ReplayError('ChangeLogIncomplete', `${chunk.name} is named for revisions ${chunk.from}-${chunk.to} but holds ${held.length} revisions`);
  }
  return body;
}

export interface ReplayRequest extends ChangeLogSource {
  etcd: EtcdClient;
  endpoint: string;
  chunks: readonly ChunkName[];
  target: number;
  /**
   * Every revision of the restored store up to here is known to be the source's: the snapshot's revision as its
   * name says (or as found, when bumped), then what an earlier pass replayed. Revisions past it that the store
   * already holds are checked against the log before anything is written. In the source's numbers, as `target` is.
   */
  checkedThrough: number;
  /** How the restored store numbers the source's revisions (a bump of etcdutl's). */
  shift: RevisionShift;
  /** Stop here (ms since the epoch) and answer how far it got; the next call goes on from the store's revision. */
  untilMs: number;
  log: Logger;
}

/** The source's revisions from `from` to `to` (both included), a chunk at a time; a revision the log lacks is an error. */
async function* loggedRevisions(r: ReplayRequest, from: number, to: number): AsyncIterable<{ revision: number; events: ChangeEvent[] }> {
  let next = from;
  for (const chunk of chunksFor(r.chunks, from, to)) {
    for (const logged of (await readChunk(r, chunk)).revisions) {
      if (logged.revision < next) continue;
      if (logged.revision > to) return;
      if (logged.revision !== next) throw new ReplayError('ChangeLogIncomplete', `the change log has no revision ${next}`);
      yield { revision: logged.revision, events: logged.events.map(decodeEvent) };
      next++;
    }
  }
}

/**
 * Whether the store holds, at `revision`, what the source wrote then: every put's key with its value, version
 * and revisions, no deleted key, and as many keys in all as those events leave (a lease that ran out with more
 * keys than the source's deleted is found by the count). A revision is one transaction, so a store that was the
 * source's before it and holds all this at it wrote nothing else then.
 */
async function holdsRevision(r: ReplayRequest, revision: number, events: readonly ChangeEvent[]): Promise<boolean> {
  const at = storeRevisionOf(r.shift, revision);
  for (const e of events) {
    const { kvs } = await r.etcd.rangePage(r.endpoint, e.key, at, 1);
    const kv = kvs[0]?.key.equals(e.key) ? kvs[0] : undefined;
    if (e.type === 'delete') {
      if (kv !== undefined) return false;
    } else if (!kv || kv.modRevision !== at || kv.createRevision !== keyRevision(r.shift, e.createRevision) || kv.version !== e.version || !kv.value.equals(e.value)) {
      return false;
    }
  }
  const created = events.filter((e) => e.type === 'put' && e.version === 1).length;
  const deleted = events.filter((e) => e.type === 'delete').length;
  const [before, after] = await Promise.all([r.etcd.keyCount(r.endpoint, storeRevisionOf(r.shift, revision - 1)), r.etcd.keyCount(r.endpoint, at)]);
  return after === before + created - deleted;
}

/**
 * The operations that write one source revision in one transaction: one per event while etcd's limit allows;
 * past it, the deleted keys in runs of one ranged delete each (a prefix delete, a lease that went with hundreds
 * of keys), which the store is asked for first so that a run deletes nothing else.
 */
async function revisionOps(r: ReplayRequest, revision: number, events: readonly ChangeEvent[]): Promise<TxnOp[]> {
  const ops = eventOps(events);
  if (ops.length <= MAX_TXN_OPS) return ops;
  const deleted = events.filter((e) => e.type === 'delete').map((e) => e.key).sort((a, b) => Buffer.compare(a, b));
  const first = deleted[0];
  const last = deleted[deleted.length - 1];
  const written = events.filter((e) => e.type === 'put').map((e) => e.key);
  const grouped = first && last ? deleteRuns(deleted, await r.etcd.keysBetween(r.endpoint, first, last), written) : { runs: [] };
  if ('missing' in grouped) {
    throw new ReplayError('WrittenDuringRestore', `revision ${revision} deletes ${grouped.missing.toString('utf8')}, which the restored store does not hold: something other than the replay changed it`);
  }
  const grouping = [...ops.filter((o) => o.type === 'put'), ...grouped.runs];
  if (grouping.length > MAX_TXN_OPS) {
    throw new ReplayError('RevisionTooLarge', `revision ${revision} has ${events.length} events that take ${grouping.length} operations even with deletes in ranges; etcd refuses more than ${MAX_TXN_OPS} in one transaction, and splitting it would give the restored store revisions the source never had`);
  }
  return grouping;
}

/** etcd's refusals of a transaction for its size: no retry changes them. */
const TOO_LARGE = /too many operations in txn request|request is too large/;
/**
 * etcd's refusals of a transaction as invalid in itself. (Other refusals the gateway also answers with HTTP 400,
 * such as a learner that serves no writes or a member not ready yet, pass.)
 */
const INVALID = /duplicate key given in txn request|key is not provided|empty key/;

/**
 * What an error of etcd's during the replay means for the restore: a transaction etcd refused as invalid (too
 * large, a duplicate key) is refused the same way every time, and history the store has compacted cannot be
 * checked again; any other of etcd's (a member unreachable, a timeout, a learner) is worth another try.
 */
function replayFailure(err: unknown, revision: number): unknown {
  if (!(err instanceof EtcdError)) return err;
  if (TOO_LARGE.test(err.message)) return new ReplayError('RevisionTooLarge', `revision ${revision}: ${err.message}`);
  if (compactedAway(err)) {
    return new ReplayError('StoreCompacted', `revision ${revision} is compacted in the restored store before the replay could check it (autoCompaction in clusterSpec, or the snapshot compacted past its name): ${err.message}`);
  }
  if (INVALID.test(err.message)) return new ReplayError('ReplayRefused', `etcd refused revision ${revision}: ${err.message}`);
  return err;
}

/** The replay stopped on an error worth another try; it had written every revision up to `through`. */
export class ReplayInterrupted extends Error {
  constructor(readonly through: number, override readonly cause: unknown) {
    super(`the replay stopped at revision ${through}: ${(cause as Error).message}`);
    this.name = 'ReplayInterrupted';
  }
}

/**
 * Transactions sent before the first of them is answered. etcd writes the proposals that reach it together with one
 * disk sync; one at a time, each waited for a sync of its own (70-100 revisions a second on the lab).
 */
const REPLAY_WINDOW = 16;

/** A revision's transaction on its way: its answer, or the error that came instead (taken in revision order). */
interface Sent {
  revision: number;
  ops: TxnOp[];
  guard: TxnCompare[];
  answer: Promise<{ applied: boolean; revision: number } | { error: unknown }>;
}

function send(r: ReplayRequest, revision: number, ops: TxnOp[], guard: TxnCompare[]): Sent {
  return { revision, ops, guard, answer: r.etcd.applyRevision(r.endpoint, ops, guard).catch((error: unknown) => ({ error })) };
}

/**
 * Writes the change log into the restored cluster, one transaction per source revision, from the
 * revision its store is at up to `target`. Each transaction must land at exactly the source's revision (raised by
 * the restore's bump): the restored store then has the same keys, values, versions and revisions as the source had. Resumable:
 * it starts from the store's own revision, so a transaction whose answer was lost is not written twice; but a
 * revision it did not write (a lease that expired, a client) is found and refused, never skipped.
 */
export async function replay(r: ReplayRequest): Promise<number> {
  const progress = { through: r.checkedThrough, revision: r.checkedThrough };
  const window: Sent[] = [];
  try {
    return await replayFrom(r, progress, window);
  } catch (err) {
    // What is still on its way settles first (each call has its deadline): the next pass then reads the store after it.
    await Promise.all(window.map((s) => s.answer));
    const failure = replayFailure(err, progress.revision);
    // The store's own errors (a chunk that no longer checks, a key gone from the Secret) go to the restore's refusals.
    throw failure instanceof EtcdError ? new ReplayInterrupted(progress.through, failure) : failure;
  }
}

/** Whether `s` was written where it must land (false: its guard held it back); its error, or a wrong place, is thrown. */
async function landed(r: ReplayRequest, progress: { revision: number }, s: Sent): Promise<boolean> {
  const answer = await s.answer;
  progress.revision = s.revision;
  if ('error' in answer) throw answer.error;
  if (!answer.applied) return false;
  if (answer.revision !== keyRevision(r.shift, s.revision)) {
    throw new ReplayError('WrittenDuringRestore', `revision ${s.revision} landed at ${answer.revision}, not ${keyRevision(r.shift, s.revision)}: something else wrote to the restored cluster while the change log was replayed`);
  }
  return true;
}

async function replayFrom(r: ReplayRequest, progress: { through: number; revision: number }, window: Sent[]): Promise<number> {
  let at = sourceRevisionOf(r.shift, await r.etcd.currentRevision(r.endpoint));
  for await (const { revision, events } of loggedRevisions(r, r.checkedThrough + 1, Math.min(at, r.target))) {
    progress.revision = revision;
    if (!await holdsRevision(r, revision, events)) {
      throw new ReplayError('WrittenDuringRestore', `revision ${revision} of the restored store is not the source's: something other than the replay wrote to it (a client, or a lease of the snapshot that expired)`);
    }
  }
  if (at > r.target) {
    throw new ReplayError('SnapshotPastTarget', `the restored store is at the source's revision ${at}, past ${r.target}: the snapshot was taken later than its name says; choose a revision at or after ${at}`);
  }
  progress.through = Math.max(progress.through, at);
  const written = (revision: number): void => {
    at = revision;
    progress.through = at;
    if (revision % 100 === 0) r.log.info({ through: at, target: r.target }, 'change log replayed');
  };
  /**
   * Takes the oldest answer. One its guard held back reached etcd before the one before it; so did every later one
   * (each waits on the one before), and they are sent again one at a time. An answer not yet taken stays in
   * `window`, so that an error waits for it too.
   */
  const confirmOldest = async (): Promise<void> => {
    const oldest = window[0];
    if (!oldest) return;
    const applied = await landed(r, progress, oldest);
    window.shift();
    if (applied) {
      written(oldest.revision);
      return;
    }
    const held = [oldest];
    for (let next = window[0]; next; next = window[0]) {
      // Landed where it must although one before it was held back: a transaction of an interrupted pass wrote that
      // one meanwhile. Tried again: the next pass checks what the store holds before it writes.
      if (await landed(r, progress, next)) throw new EtcdError(r.endpoint, `revision ${next.revision} landed while ${oldest.revision} was held back: an earlier pass's transaction landed meanwhile`);
      held.push(next);
      window.shift();
    }
    for (const s of held) {
      if (await landed(r, progress, send(r, s.revision, s.ops, s.guard))) {
        written(s.revision);
        continue;
      }
      // Alone, its guard holds on the store the revision before it left. A store that moved since was written by an
      // earlier pass's late transaction (the next pass checks it); one that stands there differs from the source.
      if (sourceRevisionOf(r.shift, await r.etcd.currentRevision(r.endpoint)) === s.revision - 1) {
        throw new ReplayError('WrittenDuringRestore', `revision ${s.revision} cannot be written on the restored store at revision ${s.revision - 1}: it does not hold what the source did then (something other than the replay changed it)`);
      }
      throw new EtcdError(r.endpoint, `revision ${s.revision} was held back alone: the store moved under the replay`);
    }
  };
  // The first revision's guard names the one the store stands at, when the log holds it (not the snapshot's).
  let previous: LoggedRevision | undefined;
  const standing = at;
  for await (const logged of loggedRevisions(r, standing > r.shift.held ? standing : standing + 1, r.target)) {
    const { revision, events } = logged;
    if (revision > standing) {
      if (Date.now() >= r.untilMs) break;
      // A revision too large for one operation per event has its deletes grouped by what the store holds: read once
      // every revision before it is written. One after a revision that only deletes waits for it (see sendsAfter).
      if (eventOps(events).length > MAX_TXN_OPS || (previous && !sendsAfter(previous))) while (window.length > 0) await confirmOldest();
      window.push(send(r, revision, await revisionOps(r, revision, events), revisionGuard(r.shift, revision, events, previous)));
      if (window.length >= REPLAY_WINDOW) await confirmOldest();
    }
    previous = logged;
  }
  while (window.length > 0) await confirmOldest();
  r.log.info({ through: at, target: r.target }, 'change log replayed');
  // Stopped short with time left: no stored chunk holds the next revision (removed since the point was
  // chosen, by retention or by hand). Another pass would find the same, for ever.
  if (at < r.target && Date.now() < r.untilMs) throw new ReplayError('ChangeLogIncomplete', `the change log has no revision ${at + 1}: its chunk is no longer stored`);
  return at;
}

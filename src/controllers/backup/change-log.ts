import { Readable } from 'node:stream';
import type { Logger } from '../../runtime/log.js';
import type { EtcdClient } from '../../etcd/client.js';
import { isAborted, sleep } from '../../runtime/abortable.js';
import { byRevision, changeLogPrefix, chunkName, chunksOf, coveredRuns, encodeChunk } from '../../storage/change-log.js';
import type { ClockReading, Hole, LoggedRevision } from '../../storage/change-log.js';
import { datedPeriodicBackups } from '../../storage/naming.js';
import { seal, seals } from '../../storage/sealed.js';
import type { SealOptions } from '../../storage/sealed.js';
import type { BackupStorage } from '../../storage/storage.js';

export interface ChangeLogSettings {
  storage: BackupStorage;
  /** The backup's object name: snapshots are `<base>_v…`, the log `<base>.changes/…`. */
  base: string;
  sealing: SealOptions;
  /** A chunk is closed this often (etcd is asked to confirm progress), or sooner when `chunkBytes` are waiting. */
  chunkMs: number;
  chunkBytes: number;
  /** Where to watch, asked again at each (re)connection: the cluster's members change. */
  source: () => Promise<{ etcd: EtcdClient; endpoints: string[] }>;
  /** Told each confirmation as it happens (the metrics' RPO is live, not as of the last status write). */
  confirmed: (state: Readonly<ChangeLogState>) => void;
  log: Logger;
}

/** A gap the log could not avoid: etcd had compacted these revisions before they were read. */
export interface Gap extends Hole { detectedAtMs: number }

/** What the log holds and how fresh it is, for status and metrics. */
export interface ChangeLogState {
  /** The first revision of the log's latest unbroken stretch. */
  fromRevision?: number;
  /** Every revision up to this one is in storage. */
  throughRevision?: number;
  /** When etcd was last asked for the progress that is now stored: the RPO is the time since. */
  confirmedAtMs?: number;
  gaps: Gap[];
  /** The log waits for a full snapshot at or after this revision (a gap, or no snapshot yet). */
  needsSnapshotFrom?: number;
  /** The last failure, until the log is confirmed again. */
  error?: string;
}

const RETRY_MS = 1000;
/**
 * A member that leaves a progress request unanswered and sends nothing at all for this long (at least
 * three chunk periods) is given up for another: hung or cut off, it keeps its connection open and says
 * nothing, and the log would wait on it for ever. Events still arriving (a log catching up from far behind,
 * which etcd confirms only once it has caught up) show it is alive.
 */
const MIN_SILENCE_MS = 10_000;
const SNAPSHOT_POLL_MS = 2000;
/** Progress requests remembered while unanswered; more are still sent, and their answers, if any, are not counted. */
const MAX_ASKED = 4;

/** Clock readings kept for the next chunk (a quiet cluster stores none for long; older ones add nothing). */
const MAX_READINGS = 256;

/** A progress request: when it was sent, and the cluster's revision read through the leader just before (if it answered). */
interface Asked { atMs: number; linearizable: number | undefined }
/** The gaps a log and its status remember (the latest). */
export const GAPS_KEPT = 10;

/**
 * A continuous backup's change log, kept while its EtcdBackup asks for it: watches every key from the
 * revision after the last stored chunk (or after the newest full snapshot), and every `chunkMs` asks etcd
 * for progress; its answer confirms that nothing up to its revision is left unsent, and the revisions
 * received by then are stored as one chunk. A restart or a lost member resumes from the last stored chunk,
 * so an operator restart, a leader change or a compaction of revisions already read leave no gap. When
 * etcd has compacted revisions not yet stored, the gap is recorded and the log resumes after a new full
 * snapshot (asked for through `needsSnapshotFrom`).
 */
export class ChangeLog {
  private readonly state: ChangeLogState = { gaps: [] };
  /**
   * Clock readings not stored yet. Kept across a reconnection (a chunk whose write failed takes its readings
   * back), so a time while the store was down is still pinned by the readings taken then.
   */
  private readonly clock: ClockReading[] = [];
  private readonly stopped = new AbortController();
  readonly done: Promise<void>;

  constructor(private readonly s: ChangeLogSettings, term: AbortSignal) {
    const signal = AbortSignal.any([term, this.stopped.signal]);
    this.done = this.run(signal);
  }

  get current(): Readonly<ChangeLogState> {
    return { ...this.state, gaps: [...this.state.gaps] };
  }

  stop(): Promise<void> {
    this.stopped.abort();
    return this.done;
  }

  private async run(signal: AbortSignal): Promise<void> {
    // The log resumes from storage only with a snapshot at or after this revision (a gap was found before it).
    let snapshotFrom: number | undefined;
    let attempt = 0;
    while (!isAborted(signal)) {
      try {
        const next = await this.resumePoint(snapshotFrom);
        if (next === undefined) {
          this.state.needsSnapshotFrom = snapshotFrom ?? 0;
          await sleep(SNAPSHOT_POLL_MS, signal);
          continue;
        }
        snapshotFrom = undefined;
        delete this.state.needsSnapshotFrom;
        const compacted = await this.follow(next, attempt++, signal);
        if (compacted !== undefined) {
          const gap = { from: next, to: compacted - 1, detectedAtMs: Date.now() };
          this.state.gaps = [...this.state.gaps, gap].slice(-GAPS_KEPT);
          snapshotFrom = compacted;
          this.s.log.warn({ gap }, 'change log gap: etcd compacted revisions before they were stored; a full snapshot starts the log again');
        }
      } catch (err) {
        if (isAborted(signal)) break;
        this.state.error = (err as Error).message;
        this.s.log.warn({ err }, 'change log interrupted; resuming from the last stored chunk');
        await sleep(RETRY_MS, signal);
      }
    }
  }

  /**
   * The first revision not yet stored: after the last chunk, or (no chunks yet, or after a gap) after the
   * newest full snapshot at or after `snapshotFrom`. Undefined while there is no such snapshot.
   */
  private async resumePoint(snapshotFrom: number | undefined): Promise<number | undefined> {
    const chunks = chunksOf(await this.s.storage.list(changeLogPrefix(this.s.base)), this.s.base);
    const last = chunks[chunks.length - 1];
    // After a gap the log starts again from a snapshot, until a chunk past the gap is stored: a follow from that
    // snapshot that fails before storing one must not send the next try back to the chunks before the gap, where
    // etcd has compacted (each try found the same gap again, and the log never resumed).
    const latestGap = this.state.gaps.at(-1);
    if (snapshotFrom === undefined && latestGap && last && last.to <= latestGap.to) return this.resumePoint(latestGap.to + 1);
    if (last && snapshotFrom === undefined) {
      this.state.fromRevision = coveredRuns(chunks).at(-1)?.from ?? last.from;
      this.state.throughRevision = last.to;
      // A chunk is named for a confirmation (never a later one than true): after a restart the status and the
      // RPO start from the stored log's, not blank until the next chunk.
      if (this.state.confirmedAtMs === undefined && last.confirmedAtMs > 0) {
        this.state.confirmedAtMs = last.confirmedAtMs;
        this.s.confirmed(this.current);
      }
      return last.to + 1;
    }
    const snapshots = datedPeriodicBackups(await this.s.storage.list(`${this.s.base}_v`), this.s.base);
    const newest = snapshots.reduce((a, b) => (b.revision > a ? b.revision : a), -1);
    if (newest < 0 || newest < (snapshotFrom ?? 0)) return undefined;
    // A gap ends where the log can start again: the revisions between the compaction and this snapshot are in
    // neither the log nor a snapshot, so they cannot be restored either.
    const gap = this.state.gaps.at(-1);
    if (snapshotFrom !== undefined && gap && newest - 1 > gap.to) {
      this.state.gaps = [...this.state.gaps.slice(0, -1), { ...gap, to: newest - 1 }];
      this.s.log.warn({ gap: this.state.gaps.at(-1) }, 'change log gap: it runs to the snapshot the log resumes from');
    }
    this.state.fromRevision = newest + 1;
    this.state.throughRevision = newest;
    return newest + 1;
  }

  /**
   * Follows the watch from `next`, storing a chunk at each confirmed progress, until the stream fails or the
   * signal aborts. Answers the compaction revision when `next` was compacted away.
   */
  private async follow(next: number, attempt: number, signal: AbortSignal): Promise<number | undefined> {
    const { etcd, endpoints } = await this.s.source();
    if (endpoints.length === 0) throw new Error('no member to watch');
    const endpoint = endpoints[attempt % endpoints.length] ?? '';
    const watch = await etcd.watch(endpoint, next);
    // Progress requests sent and not answered yet, oldest first. etcd answers them in order, but drops one sent
    // while the watch is catching up: a request unanswered for two chunk periods is sent again, and each answer
    // counts from the oldest request still waiting (an earlier time than its own: never a fresher RPO than true).
    const asked: Asked[] = [];
    const { clock } = this;
    const asking = { now: false };
    /**
     * A linearizable read through the watched member: once it answers, the member has applied every revision the
     * cluster committed before it began. A member cut off from the leader, or stuck applying, cannot answer it.
     * Each answer is a clock reading, kept with the next chunk stored: a restore to a time is pinned by them.
     */
    const read = async (): Promise<Asked> => {
      const atMs = Date.now();
      const linearizable = await etcd.currentRevision(endpoint).then((r) => r, () => undefined);
      if (linearizable !== undefined && !signal.aborted) {
        clock.push({ startMs: atMs, doneMs: Date.now(), revision: linearizable });
        // While nothing is written no chunk is stored: the newest readings are the ones that pin times then.
        if (clock.length > MAX_READINGS) clock.splice(0, clock.length - MAX_READINGS);
      }
      return { atMs, linearizable };
    };
    // A progress request goes after a reading: its answer then covers every revision the reading vouches for.
    const ask = (): void => {
      if (asking.now) return;
      asking.now = true;
      void read().then((reading) => {
        asking.now = false;
        if (signal.aborted) return;
        // etcd answers no progress request while its revision is below the watch's start (nothing written since the
        // stored point: an idle cluster after a restart or a new snapshot), so it would wait for ever. The reading
        // alone confirms it then: every revision the cluster has is at or before `next`, stored already.
        if (asked.length === 0 && reading.linearizable !== undefined && reading.linearizable < next) {
          this.confirm(reading.atMs);
          return;
        }
        if (asked.length < MAX_ASKED) asked.push(reading);
        watch.requestProgress();
      });
    };
    const silenceMs = Math.max(3 * this.s.chunkMs, MIN_SILENCE_MS);
    let heardAt = Date.now();
    // While a chunk is being stored nothing is read from the watch: a slow store is not the member's silence.
    const storing = { now: false };
    // Set by the timer (an object: the checks below would otherwise be narrowed to its first value).
    const silence = { noticed: false };
    const timer = setInterval(() => {
      const oldest = asked[0];
      if (oldest === undefined) ask();
      else if (!storing.now && Date.now() - Math.max(oldest.atMs, heardAt) > silenceMs) {
        silence.noticed = true;
        watch.close();
      } else if (Date.now() - oldest.atMs > 2 * this.s.chunkMs) ask();
      // A reading every period, also while an answer is awaited (a slow store holds the log): times stay pinned.
      else void read();
    }, this.s.chunkMs);
    // The watch answers every progress request, so it never goes quiet by itself: stopping the log (its
    // backup's spec changed, or it was deleted) must close it, or stop() would wait for ever.
    const closeWatch = (): void => { watch.close(); };
    signal.addEventListener('abort', closeWatch, { once: true });
    if (signal.aborted) closeWatch();
    let pending: LoggedRevision[] = [];
    let pendingBytes = 0;
    let from = next;
    this.s.log.info({ endpoint, from }, 'change log following');
    try {
      for await (const m of watch.messages) {
        heardAt = Date.now();
        if (m.kind === 'compacted') return m.compactRevision;
        if (m.kind === 'canceled') throw new Error(`etcd canceled the watch: ${m.reason}`);
        if (m.kind === 'events') {
          pending = byRevision(m.events, Date.now(), pending);
          pendingBytes += m.events.reduce((n, e) => n + e.raw.length, 0);
          if (pendingBytes >= this.s.chunkBytes && asked.length === 0) ask();
          continue;
        }
        const answered = asked.shift();
        if (answered === undefined) continue;
        storing.now = true;
        from = await this.store(from, m.revision, pending, answered, endpoint).finally(() => {
          storing.now = false;
          heardAt = Date.now();
        });
        pending = [];
        pendingBytes = 0;
      }
      if (!isAborted(signal)) throw new Error('the watch ended');
      return undefined;
    } catch (err) {
      throw silence.noticed ? new Error(`${endpoint} sent nothing for ${silenceMs / 1000} s with a progress request unanswered; following another member`) : err;
    } finally {
      clearInterval(timer);
      signal.removeEventListener('abort', closeWatch);
      watch.close();
    }
  }

  /**
   * Stores the revisions from `from` through `through` as one chunk (none when nothing changed); answers the next
   * `from`. The log counts as confirmed up to when it was asked only if the cluster's revision read through the
   * leader then is stored too; otherwise it stays as confirmed before, and its RPO rises.
   */
  private async store(from: number, through: number, revisions: LoggedRevision[], asked: Asked, endpoint: string): Promise<number> {
    const held = revisions.map((r) => r.revision);
    // Every revision has events, so a confirmed stretch holds each of its revisions once, in order; anything
    // else (a progress answered ahead of its events) must not be stored as complete.
    if (held.length !== Math.max(0, through - from + 1) || held.some((r, i) => r !== from + i)) {
      throw new Error(`etcd confirmed revisions ${from}-${through} but sent ${held.length === 0 ? 'none' : `${held[0] ?? ''}-${held[held.length - 1] ?? ''} (${held.length})`}`);
    }
    const confirmed = asked.linearizable !== undefined && through >= asked.linearizable;
    if (through >= from) {
      // Named for the time the log is confirmed up to: this request's if it confirmed it, else the last one's.
      const name = chunkName(this.s.base, from, through, confirmed ? asked.atMs : this.state.confirmedAtMs ?? 0);
      // The readings taken so far go with it (those taken while it is stored go with the next); dropped from
      // memory only once it is stored.
      const readings = this.clock.slice();
      const body = encodeChunk(revisions, readings);
      const data = Readable.from([body]);
      await this.s.storage.put(name, seals(this.s.sealing) ? seal(data, this.s.sealing) : data);
      const stored = new Set(readings);
      const rest = this.clock.filter((c) => !stored.has(c));
      this.clock.splice(0, this.clock.length, ...rest);
    }
    this.state.throughRevision = through;
    if (!confirmed) {
      this.state.error = asked.linearizable === undefined
        ? `${endpoint} could not read the cluster's revision through its leader (cut off from its peers, or stuck): its progress is not confirmed`
        : `${endpoint} reported progress through ${through}, behind the cluster's ${asked.linearizable}`;
      return through + 1;
    }
    this.confirm(asked.atMs);
    return through + 1;
  }

  /** Everything the cluster held when asked at `atMs` is stored: the RPO counts from then. */
  private confirm(atMs: number): void {
    this.state.confirmedAtMs = atMs;
    delete this.state.error;
    this.s.confirmed(this.current);
  }
}

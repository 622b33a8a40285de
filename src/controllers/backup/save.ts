import { Readable } from 'node:stream';
import type { Logger } from '../../runtime/log.js';
import type { EtcdClient } from '../../etcd/client.js';
import { HELD_SUFFIX, datedPeriodicBackups, periodicName } from '../../storage/naming.js';
import { changeLogPrefix, chunksOf, prunableChunks } from '../../storage/change-log.js';
import { expired } from '../../storage/retention.js';
import type { Retention } from '../../storage/retention.js';
import type { BackupStorage, StoredObject } from '../../storage/storage.js';
import { seal, seals } from '../../storage/sealed.js';
import type { Codec, SealOptions } from '../../storage/sealed.js';
import { firstAnswer } from './source.js';
import { SnapshotRevision } from '../../etcd/snapshot-revision.js';

const PROGRESS_BYTES = 64 * 1024 * 1024;
/** How often a snapshot under way tells how far it got, when that changed. */
const PROGRESS_MS = 5000;

/** A snapshot under way. */
export interface SnapshotProgress {
  object: string;
  member: string;
  startedAtMs: number;
  receivedBytes: number;
  lastReceivedAtMs: number;
}

export interface SaveRequest {
  etcd: EtcdClient;
  /** Client URLs to try in order; the first that answers is snapshotted. */
  endpoints: string[];
  storage: BackupStorage;
  /** The object name, or the base of periodic names. */
  base: string;
  periodic: boolean;
  /** Which periodic backups are kept. */
  retention: Retention;
  /** A continuous backup's: chunks of its change log that no kept snapshot needs go with the snapshots. */
  changeLog?: boolean;
  /** Compression and encryption of the object (none: a plain etcd snapshot). */
  sealing: SealOptions;
  /**
   * Snapshots a point-in-time restore under way starts from: retention keeps them, and the change log after them,
   * until it ends (its replay reads them as it goes).
   */
  inUse?: ReadonlySet<string>;
  timeoutMs: number;
  log: Logger;
  /** Told when the snapshot starts, when its first bytes come, then every few seconds while more came. */
  progress?: (p: SnapshotProgress) => void;
}

/** What a backup wrote, from which revision and version; how many periodic backups remain. */
export interface Saved {
  object: StoredObject & { compression: Codec; keyId?: string };
  /** The revision the snapshot holds, read from it; with `revisionAtLeast`, the lowest it may hold. */
  revision: number;
  /** Set only when the snapshot's own revision could not be read: `revision` is the member's before it began. */
  revisionAtLeast?: true;
  version: string;
  /** From the snapshot's start to the object stored. */
  seconds: number;
  kept?: number;
}

/**
 * One backup, wherever it runs (the operator for S3, a pod with the volume mounted for Volume): the
 * snapshot of the first member that answers, streamed into the storage, then retention.
 */
export async function saveSnapshot(r: SaveRequest): Promise<Saved> {
  const member = await firstAnswer(r.endpoints, (e) => r.etcd.status(e));
  const { revision: before, version } = member.value;
  // A periodic name carries the member's revision before the snapshot began, the lowest it may hold: its change
  // log is kept from there. What it holds is read from its bytes (SnapshotRevision).
  const objectName = r.periodic ? periodicName(r.base, before, new Date()) : r.base;
  r.log.info({ from: member.endpoint, to: objectName, revision: before }, 'backup started');
  const started = performance.now();
  const startedAtMs = Date.now();
  const teller = new ProgressTeller((receivedBytes, lastReceivedAtMs) => r.progress?.({ object: objectName, member: member.endpoint, startedAtMs, receivedBytes, lastReceivedAtMs }));
  const reader = new SnapshotRevision();
  const snapshot = paced(reader.pass(r.etcd.snapshot(member.endpoint, r.timeoutMs)), r.timeoutMs, r.log, (bytes) => { teller.received(bytes); });
  const stored = await r.storage.put(objectName, seals(r.sealing) ? seal(snapshot, r.sealing) : snapshot).finally(() => { teller.stop(); });
  const object = { ...stored, compression: r.sealing.codec, ...(r.sealing.key ? { keyId: r.sealing.key.id } : {}) };
  const seconds = Number(((performance.now() - started) / 1000).toFixed(3));
  // 0: no key revision in it (no key was ever written), so nothing moved since the member's reading.
  const read = reader.revision();
  const revision = read === 0 ? before : read;
  if (revision === undefined) r.log.warn({ object: objectName, revisionAtLeast: before }, 'the snapshot\'s own revision could not be read from it');
  const taken: Saved = { object, ...(revision === undefined ? { revision: before, revisionAtLeast: true } : { revision }), version, seconds };
  if (!r.periodic) return taken;
  // Only a point-in-time restore reads it, and only a continuous backup's; one not written leaves the name's revision
  // to go by, as before: a backup stored is not failed for it.
  if (r.changeLog && revision !== undefined && revision > before) {
    await r.storage.put(`${objectName}${HELD_SUFFIX}`, Readable.from([Buffer.from(`${revision}\n`)])).catch((err: unknown) => {
      r.log.warn({ object: objectName, revision, error: (err as Error).message }, 'the revision the snapshot holds not stored beside it');
    });
  }
  for (const old of retentionRemovals(await r.storage.list(`${r.base}_v`), r.base, r.retention, Date.now(), r.inUse)) {
    await r.storage.remove(old);
    r.log.info({ removed: old }, 'old backup removed (retention)');
  }
  const kept = datedPeriodicBackups(await r.storage.list(`${r.base}_v`), r.base);
  if (r.changeLog && kept.length > 0) {
    const before = Math.min(...kept.map((k) => k.revision));
    const unneeded = prunableChunks(chunksOf(await r.storage.list(changeLogPrefix(r.base)), r.base), before);
    for (const chunk of unneeded) await r.storage.remove(chunk.name);
    if (unneeded.length > 0) r.log.info({ removed: unneeded.length, before }, 'change log chunks no kept snapshot needs removed');
  }
  return { ...taken, kept: kept.length };
}

/**
 * What retention removes of the periodic backups `listed`: each expired one but those `inUse`, and the `.held`
 * object beside it where there is one.
 */
export function retentionRemovals(listed: readonly string[], base: string, retention: Retention, nowMs: number, inUse: ReadonlySet<string> = new Set()): string[] {
  return expired(listed, base, retention, nowMs).filter((name) => !inUse.has(name))
    .flatMap((name) => (listed.includes(`${name}${HELD_SUFFIX}`) ? [name, `${name}${HELD_SUFFIX}`] : [name]));
}

/**
 * Tells how much of a snapshot has come: at once when it starts and when its first bytes come, then on a timer
 * whenever the count changed since it last told, so that a stream that stops (or a store that stops taking it)
 * shows everything that had come, and when it last grew, not what came before the last tick.
 */
export class ProgressTeller {
  private bytes = 0;
  private lastReceivedAtMs = Date.now();
  private told = 0;
  private readonly timer: ReturnType<typeof setInterval>;

  constructor(private readonly tell: (bytes: number, lastReceivedAtMs: number) => void, periodMs = PROGRESS_MS) {
    tell(0, this.lastReceivedAtMs);
    this.timer = setInterval(() => { this.flush(); }, periodMs);
    this.timer.unref();
  }

  received(bytes: number): void {
    const first = this.bytes === 0;
    this.bytes = bytes;
    this.lastReceivedAtMs = Date.now();
    if (first) this.flush();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private flush(): void {
    if (this.bytes === this.told) return;
    this.told = this.bytes;
    this.tell(this.bytes, this.lastReceivedAtMs);
  }
}

/**
 * Passes the snapshot (bounded by its own deadline, which holds while nothing arrives) through, logging
 * progress and counting what came for `received`; a failure at the deadline says which setting bounds it.
 */
export async function* paced(source: AsyncIterable<Buffer>, timeoutMs: number, log: Logger, received: (bytes: number) => void): AsyncIterable<Buffer> {
  const deadline = Date.now() + timeoutMs;
  let bytes = 0;
  let logged = 0;
  try {
    for await (const chunk of source) {
      bytes += chunk.length;
      if (bytes - logged >= PROGRESS_BYTES) {
        logged = bytes;
        log.info({ bytes }, 'backup in progress');
      }
      received(bytes);
      yield chunk;
    }
  } catch (err) {
    if (Date.now() < deadline) throw err;
    throw new Error(`snapshot not through after ${timeoutMs / 1000} s (backupPolicy.timeoutInSecond), ${bytes} bytes received: ${(err as Error).message}`);
  }
}

import type { Logger } from 'pino';
import type { EtcdClient } from '../../etcd/client.js';
import { decodeEvent } from '../../etcd/watch-grpc.js';
import { chunksFor, decodeChunk } from '../../storage/change-log.js';
import type { ChunkName, LoggedRevision } from '../../storage/change-log.js';
import { unseal } from '../../storage/sealed.js';
import type { KeyRing } from '../../storage/sealed.js';
import type { BackupStorage } from '../../storage/storage.js';

/** A point-in-time restore that cannot go on: the reason says why, for the EtcdRestore's condition. */
export class ReplayError extends Error {
  constructor(readonly reason: 'SnapshotPastTarget' | 'ChangeLogIncomplete' | 'WrittenDuringRestore', message: string) {
    super(message);
    this.name = 'ReplayError';
  }
}

export interface ChangeLogSource {
  storage: BackupStorage;
  keys: KeyRing;
}

/** A chunk's revisions: its bytes checked against the sha256 stored beside it, opened with its key, decoded. */
export async function readChunk(s: ChangeLogSource, chunk: ChunkName): Promise<LoggedRevision[]> {
  const parts: Buffer[] = [];
  for await (const part of unseal(s.storage.get(chunk.name), s.keys, chunk.name)) parts.push(part);
  const revisions = decodeChunk(Buffer.concat(parts));
  const held = revisions.map((r) => r.revision);
  if (held.length !== chunk.to - chunk.from + 1 || held.some((r, i) => r !== chunk.from + i)) {
    throw new ReplayError('ChangeLogIncomplete', `${chunk.name} is named for revisions ${chunk.from}-${chunk.to} but holds ${held.length} revisions`);
  }
  return revisions;
}

export interface ReplayRequest extends ChangeLogSource {
  etcd: EtcdClient;
  endpoint: string;
  chunks: readonly ChunkName[];
  target: number;
  /** Stop here (ms since the epoch) and answer how far it got; the next call goes on from the store's revision. */
  untilMs: number;
  log: Logger;
}

/**
 * Writes the change log into the restored cluster, one transaction per source revision, from the
 * revision its store is at up to `target`. Each transaction must land at exactly the source's revision:
 * the restored store then has the same keys, values, versions and revisions as the source had. Resumable:
 * it starts from the store's own revision, so a transaction whose answer was lost is not written twice.
 */
export async function replay(r: ReplayRequest): Promise<number> {
  let at = await r.etcd.currentRevision(r.endpoint);
  if (at > r.target) {
    throw new ReplayError('SnapshotPastTarget', `the restored store is at revision ${at}, past ${r.target}: the snapshot was taken later than its name says; choose a revision at or after ${at}`);
  }
  for (const chunk of chunksFor(r.chunks, at + 1, r.target)) {
    if (at >= r.target || Date.now() >= r.untilMs) break;
    for (const revision of await readChunk(r, chunk)) {
      if (revision.revision <= at) continue;
      if (revision.revision > r.target) break;
      if (revision.revision !== at + 1) throw new ReplayError('ChangeLogIncomplete', `the change log has no revision ${at + 1}`);
      const landed = await r.etcd.applyRevision(r.endpoint, revision.events.map(decodeEvent));
      if (landed !== revision.revision) {
        throw new ReplayError('WrittenDuringRestore', `revision ${revision.revision} landed at ${landed}: something else wrote to the restored cluster while the change log was replayed`);
      }
      at = landed;
    }
    r.log.info({ through: at, target: r.target }, 'change log replayed');
  }
  // Stopped short with time left: no stored chunk holds the next revision (removed since the point was
  // chosen, by retention or by hand). Another pass would find the same, for ever.
  if (at < r.target && Date.now() < r.untilMs) throw new ReplayError('ChangeLogIncomplete', `the change log has no revision ${at + 1}: its chunk is no longer stored`);
  return at;
}

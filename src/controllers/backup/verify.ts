import type { Logger } from '../../runtime/log.js';
import { ignoreStatus } from '../../runtime/transport.js';
import { writeStatus } from '../../runtime/status.js';
import { rfc3339 } from '../../runtime/time.js';
import { GROUP, VERSION } from '../../api/etcd-cluster.js';
import { restorePath } from '../../api/etcd-backup.js';
import type { BackupStatus, EtcdBackup, EtcdRestore, RestoreSpec } from '../../api/etcd-backup.js';
import { ownedBy } from '../../k8s/owner.js';
import { ANNOTATION_VERIFIES } from '../../k8s/labels.js';
import { contentDigest } from '../../etcd/digest.js';
import { TROUBLE_REASONS } from '../cluster/pod-trouble.js';
import { clusterSettled } from '../cluster/views.js';
import { siblingPath } from '../../storage/locate.js';
import { firstAnswer, snapshotSource } from './source.js';
import type { BackupReconcilerDeps } from './reconciler.js';
import { backupPath, withCondition } from './backup-status.js';

type Verification = NonNullable<BackupStatus['verification']>;

/** What a finished verification found. */
export type Verdict =
  | { result: 'passed'; revision: number; method: 'HashKV' | 'ContentDigest'; keys?: number; detail: string }
  | { result: 'failed'; reason: string; message: string }
  | { result: 'inconclusive'; reason: string; message: string };

const DEFAULT_TIMEOUT_S = 900;
/** The restore may not be in the cache yet this long after it was made. */
const CACHE_GRACE_MS = 30_000;
const FOLLOW_MS = 3000;

/** The disposable cluster (and restore) a backup is verified in: a valid cluster name whatever the backup's name. */
export function verifyName(backup: string): string {
  const base = backup.replace(/\./g, '-').slice(0, 40).replace(/-+$/, '');
  return `${/^[a-z]/.test(base) ? '' : 'v'}${base}-verify`;
}

/**
 * A backup's scheduled verification, one step per reconcile: when due, the newest backup is restored into
 * a one-member cluster of its own (a continuous backup's with its change log replayed up to its newest
 * revision); once that is up, its HashKV at its revision is compared with the live
 * cluster's at the same revision (or, when the two were compacted differently, the key count and a digest
 * of every key). The result, the restore's duration (the real RTO) and a condition are recorded, and the
 * disposable cluster is deleted. Answers when to look again (undefined: no verification asked for).
 */
export async function verificationStep(d: BackupReconcilerDeps, backup: EtcdBackup, log: Logger): Promise<number | undefined> {
  const asked = backup.spec.verification;
  const current = backup.status?.verification;
  // Called off while it runs: its disposable cluster would otherwise run on until the backup is deleted.
  if (!asked) return current?.running ? callOff(d, backup, current.running, log) : undefined;
  if (current?.running) return follow(d, backup, current.running, log);
  const last = backup.status?.lastBackup;
  if (!backup.status?.succeeded || !last?.path) return FOLLOW_MS * 10;
  const intervalMs = asked.intervalInSecond * 1000;
  const since = Date.now() - Date.parse(current?.lastAttemptAt ?? '');
  if (Number.isFinite(since) && since < intervalMs) return intervalMs - since;
  try {
    // The last one's cluster is still being collected: a new restore of the same name would take it for its own.
    if (await leftBehind(d, backup, log)) return FOLLOW_MS;
    await start(d, backup, last.path, log);
  } catch (err) {
    // Not the backup's fault (rights, the API server): said on the condition, tried again later.
    const message = `cannot start a verification: ${(err as Error).message}`;
    await writeStatus<BackupStatus, EtcdBackup>(d.transport, backupPath(backup), backup, (cur) => ({
      ...cur.status, conditions: withCondition(cur.status?.conditions, { type: 'Verified', status: 'Unknown', reason: 'CannotVerify', message }, backup.metadata.generation),
    }));
    log.warn({ err }, 'verification not started');
    return FOLLOW_MS * 10;
  }
  return FOLLOW_MS;
}

/**
 * Whether a verification's restore or cluster is still there, though none runs: being collected (a verdict
 * was just recorded), or left behind (the operator stopped before deleting it, or the delete failed). A
 * restore of ours left behind is deleted, its cluster with it, once the API server confirms that the backup
 * has no verification running; anything else of that name is reported, never touched.
 */
async function leftBehind(d: BackupReconcilerDeps, backup: EtcdBackup, log: Logger): Promise<boolean> {
  const { namespace, name } = backup.metadata;
  const target = verifyName(name);
  const restore = d.restores.get(namespace, target);
  if (!restore) return d.clusters.get(namespace, target) !== undefined;
  refuseUnlessOurs(restore, name);
  if (restore.metadata.deletionTimestamp) return true;
  const live = (await d.transport.call('GET', backupPath(backup))) as EtcdBackup;
  if (live.status?.verification?.running) return true;
  await d.transport.call('DELETE', restorePath(namespace, target), { apiVersion: 'v1', kind: 'DeleteOptions', preconditions: { uid: restore.metadata.uid } }).catch(ignoreStatus(404));
  log.info({ restore: target }, 'verification: a restore left behind by an earlier one deleted');
  return true;
}

/** Throws for a restore of a verification's name that is not the backup's own: it is reported, never followed or deleted. */
function refuseUnlessOurs(restore: EtcdRestore, backup: string): void {
  if (restore.metadata.annotations?.[ANNOTATION_VERIFIES] !== backup) throw new Error(`EtcdRestore ${restore.metadata.name} exists and is not this backup's verification; rename or delete it`);
}

/** Deletes a running verification's restore (its cluster goes with it) and forgets it: no longer asked for. */
async function callOff(d: BackupReconcilerDeps, backup: EtcdBackup, running: NonNullable<Verification['running']>, log: Logger): Promise<undefined> {
  const target = running.restore ?? '';
  await d.transport.call('DELETE', restorePath(backup.metadata.namespace, target)).catch(ignoreStatus(404));
  await writeStatus<BackupStatus, EtcdBackup>(d.transport, backupPath(backup), backup, (cur) => {
    const verification = { ...cur.status?.verification };
    delete verification.running;
    return { ...cur.status, verification };
  });
  log.info({ restore: target }, 'verification called off: spec.verification removed');
  return undefined;
}

/**
 * The point a continuous backup is verified at: the newest revision its change log holds, when that is past
 * its newest snapshot. Restoring the snapshot alone would prove the log nothing, and the log is what a
 * restore to the last moment before a disaster depends on.
 */
export function pointToVerify(backup: EtcdBackup): number | undefined {
  const through = backup.spec.continuous ? backup.status?.changeLog?.throughRevision : undefined;
  return through !== undefined && through > (backup.status?.etcdRevision ?? 0) ? through : undefined;
}

/** Makes the disposable restore of `object` (with a continuous backup's change log replayed on it) and records that it runs. */
async function start(d: BackupReconcilerDeps, backup: EtcdBackup, object: string, log: Logger): Promise<void> {
  const { namespace, name, uid = '' } = backup.metadata;
  const target = verifyName(name);
  const { spec } = backup;
  const revision = pointToVerify(backup);
  const point = revision === undefined ? {} : { revision };
  const source = spec.clusterName ? d.clusters.get(namespace, spec.clusterName) : undefined;
  const restoreSpec: RestoreSpec = {
    etcdCluster: { name: target }, backupStorageType: spec.storageType,
    // A point-in-time restore names the backup's own path, where both its snapshots and its change log are.
    ...(spec.s3 ? { s3: { ...spec.s3, path: revision === undefined ? siblingPath(spec.s3.path, object) : spec.s3.path } } : {}),
    ...(revision === undefined ? {} : { pointInTime: { revision } }),
    ...(spec.volume ? { volume: { claimName: spec.volume.claimName, path: object } } : {}),
    ...(spec.encryption ? { encryption: { keySecret: spec.encryption.keySecret } } : {}),
    // Compared with the live cluster revision for revision: its numbers must stay the source's.
    revisionBump: 0,
    clusterSpec: { size: 1, ...(source?.spec.version ? { version: source.spec.version } : {}), ...(source?.spec.repository ? { repository: source.spec.repository } : {}) },
  };
  await d.transport.call('POST', `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdrestores`, {
    apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdRestore',
    metadata: { name: target, annotations: { [ANNOTATION_VERIFIES]: name }, ownerReferences: [ownedBy('EtcdBackup', name, uid)] }, spec: restoreSpec,
  }).catch(async (err: unknown) => {
    ignoreStatus(409)(err);
    // One of ours whose start was not recorded (the operator stopped between the two writes) is followed; another's is not touched.
    refuseUnlessOurs((await d.transport.call('GET', restorePath(namespace, target))) as EtcdRestore, name);
  });
  const now = rfc3339(Date.now());
  await writeStatus<BackupStatus, EtcdBackup>(d.transport, backupPath(backup), backup, (cur) => ({
    ...cur.status, verification: { ...cur.status?.verification, lastAttemptAt: now, running: { restore: target, object, startedAt: now, ...point } },
  }));
  log.info({ object, restore: target, ...point }, 'verification started: restoring the newest backup');
}

async function follow(d: BackupReconcilerDeps, backup: EtcdBackup, running: NonNullable<Verification['running']>, log: Logger): Promise<number> {
  const { namespace } = backup.metadata;
  const target = running.restore ?? '';
  const startedMs = Date.parse(running.startedAt ?? '');
  const elapsedMs = Date.now() - startedMs;
  const restore = d.restores.get(namespace, target);
  const timeoutMs = (backup.spec.verification?.timeoutInSecond ?? DEFAULT_TIMEOUT_S) * 1000;
  let verdict: Verdict | undefined;
  let restoreSeconds: number | undefined;
  if (!restore) {
    if (elapsedMs < CACHE_GRACE_MS) return FOLLOW_MS;
    verdict = { result: 'failed', reason: 'VerificationFailed', message: `the verification restore ${target} disappeared` };
  } else if (restore.status?.phase === 'Failed') {
    verdict = { result: 'failed', reason: restore.status.reason ?? 'RestoreFailed', message: `restoring ${running.object ?? ''} failed: ${restore.status.conditions?.[0]?.message ?? ''}` };
  } else if (restore.status?.phase === 'Completed') {
    const completedMs = Date.parse(restore.status.conditions?.find((c) => c.type === 'Completed')?.lastTransitionTime ?? '');
    restoreSeconds = Number.isFinite(completedMs) ? Math.max(0, Math.round((completedMs - startedMs) / 1000)) : undefined;
    // Compared once settled: right after a restore its member is swapped for one without the restore step.
    if (!clusterSettled(d.clusters.get(namespace, target)) && elapsedMs < timeoutMs) return FOLLOW_MS;
    verdict = await compare(d, backup, target, running.revision).catch((err: unknown): Verdict | undefined => {
      if (elapsedMs < timeoutMs) {
        log.info({ err }, 'verification: cannot compare yet');
        return undefined;
      }
      return { result: 'failed', reason: 'VerificationTimedOut', message: `no comparison within ${timeoutMs / 1000} s: ${(err as Error).message}` };
    });
  } else {
    const trouble = d.clusters.get(namespace, target)?.status?.conditions
      ?.find((c) => c.type === 'Degraded' && c.status === 'True' && (TROUBLE_REASONS as readonly string[]).includes(c.reason ?? ''));
    if (trouble) verdict = { result: 'failed', reason: trouble.reason ?? 'VerificationFailed', message: `the restored member cannot run: ${trouble.message ?? ''}` };
    else if (elapsedMs > timeoutMs) verdict = { result: 'failed', reason: 'VerificationTimedOut', message: `the restore of ${running.object ?? ''} was not through in ${timeoutMs / 1000} s` };
  }
  if (!verdict) return FOLLOW_MS;
  await record(d, backup, running, verdict, restoreSeconds, log);
  // The disposable cluster is owned by its restore, which is ours alone (named for this backup, owned by it): both go.
  // If this fails, or the operator stops first, the next verification finds it left behind and deletes it then.
  await d.transport.call('DELETE', restorePath(namespace, target)).catch(ignoreStatus(404));
  const intervalMs = (backup.spec.verification?.intervalInSecond ?? 0) * 1000;
  return Math.max(FOLLOW_MS, intervalMs - elapsedMs);
}

/**
 * The restored store against the live one, at the restored store's revision (a point-in-time restore's must
 * be the point asked for). A store rebuilt from the change log is compared by content: its history begins at
 * its snapshot and its keys carry no leases, so its HashKV differs from the live one's even when every key,
 * value and revision is the same.
 */
async function compare(d: BackupReconcilerDeps, backup: EtcdBackup, target: string, pointInTime: number | undefined): Promise<Verdict> {
  const { namespace } = backup.metadata;
  const restored = await snapshotSource({ clusterName: target, storageType: 'S3' }, namespace, d.clusters, d.pods, d.etcdClients, d.clusterDomain);
  const live = await snapshotSource(backup.spec, namespace, d.clusters, d.pods, d.etcdClients, d.clusterDomain);
  const at = restored.endpoints[0] ?? '';
  const revision = await restored.etcd.currentRevision(at);
  const compacted = (err: unknown): undefined => {
    // etcd's "required revision has been compacted", from every live member (firstAnswer tried each).
    if (err instanceof Error && /compacted/.test(err.message)) return undefined;
    throw err;
  };
  const inconclusive: Verdict = { result: 'inconclusive', reason: 'SourceCompacted', message: `the live cluster has compacted past revision ${revision} since the backup; nothing to compare with` };
  const byContent = async (): Promise<Verdict> => {
    const digests = await Promise.all([contentDigest(restored.etcd, at, revision), firstAnswer(live.endpoints, (e) => contentDigest(live.etcd, e, revision))]).catch(compacted);
    if (!digests) return inconclusive;
    const [a, { value: b }] = digests;
    if (a.keys === b.keys && a.sha256 === b.sha256) {
      return { result: 'passed', revision, method: 'ContentDigest', keys: a.keys, detail: `${a.keys} keys at revision ${revision}, digest ${a.sha256.slice(0, 16)}, equal to the live cluster's` };
    }
    return { result: 'failed', reason: 'DataDiffers', message: `at revision ${revision} the restored store has ${a.keys} keys (digest ${a.sha256.slice(0, 16)}), the live cluster ${b.keys} (${b.sha256.slice(0, 16)})` };
  };
  if (pointInTime !== undefined) {
    if (revision !== pointInTime) return { result: 'failed', reason: 'PointInTimeMissed', message: `the restore reached revision ${revision}, not the change log's ${pointInTime}` };
    return byContent();
  }
  const hashes = await Promise.all([restored.etcd.hashKV(at, revision), firstAnswer(live.endpoints, (e) => live.etcd.hashKV(e, revision))]).catch(compacted);
  if (!hashes) return inconclusive;
  const [mine, theirs] = hashes;
  if (mine.compactRevision === theirs.value.compactRevision) {
    if (mine.hash === theirs.value.hash) return { result: 'passed', revision, method: 'HashKV', detail: `HashKV ${mine.hash} at revision ${revision} equals the live cluster's` };
    return { result: 'failed', reason: 'DataDiffers', message: `at revision ${revision} the restored HashKV is ${mine.hash}, the live cluster's ${theirs.value.hash}` };
  }
  // Compacted at different revisions, the hashes cover different histories: compare the content itself.
  return byContent();
}

async function record(d: BackupReconcilerDeps, backup: EtcdBackup, running: NonNullable<Verification['running']>, v: Verdict, restoreSeconds: number | undefined, log: Logger): Promise<void> {
  const { namespace, name, uid = '', generation } = backup.metadata;
  const now = Date.now();
  const what = `${running.object ?? ''}${running.revision === undefined ? '' : ` with its change log to revision ${running.revision}`}`;
  const condition = v.result === 'passed'
    ? { type: 'Verified', status: 'True' as const, reason: 'BackupVerified', message: `${what} restored in ${restoreSeconds ?? '?'} s: ${v.detail}` }
    : { type: 'Verified', status: v.result === 'failed' ? 'False' as const : 'Unknown' as const, reason: v.reason, message: `${what}: ${v.message}` };
  await writeStatus<BackupStatus, EtcdBackup>(d.transport, backupPath(backup), backup, (cur) => {
    const kept = { ...cur.status?.verification };
    delete kept.running;
    const verification: Verification = v.result === 'passed'
      ? { ...kept, lastVerifiedRevision: v.revision, lastVerifiedAt: rfc3339(now), object: running.object ?? '', method: v.method, ...(restoreSeconds === undefined ? {} : { restoreSeconds }) }
      : kept;
    return { ...cur.status, verification, conditions: withCondition(cur.status?.conditions, condition, generation) };
  });
  d.metrics.verified(namespace, name, v.result === 'passed' ? { result: 'passed', atMs: now, revision: v.revision, ...(restoreSeconds === undefined ? {} : { restoreSeconds }) } : { result: v.result });
  await d.events.record({ apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', name, namespace, uid },
    v.result === 'passed' ? 'Normal' : 'Warning', { passed: 'BackupVerified', failed: 'VerificationFailed', inconclusive: 'VerificationInconclusive' }[v.result], condition.message);
  log.info({ verdict: v, restoreSeconds }, 'verification done');
}

import type { V1Pod } from '@kubernetes/client-node';
import type { Logger } from '../../runtime/log.js';
import { getIfExists, ignoreStatus } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import { snapshotPod } from '../../k8s/snapshot-pod.js';
import type { Reconcile, ReconcileResult } from '../../runtime/controller.js';
import type { Store } from '../../runtime/store.js';
import type { EventRecorder } from '../../runtime/events.js';
import { writeStatus } from '../../runtime/status.js';
import { rfc3339 } from '../../runtime/time.js';
import { GROUP, VERSION } from '../../api/etcd-cluster.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';
import type { BackupStatus, EtcdBackup, EtcdRestore } from '../../api/etcd-backup.js';
import { saveSnapshot } from './save.js';
import type { Saved, SnapshotProgress } from './save.js';
import { ConfigurationError } from '../cluster/tls.js';
import type { EtcdClients } from '../cluster/tls.js';
import { snapshotSource } from './source.js';
import { backupSealing, openStorage } from './storage-for.js';
import { retentionOf } from '../../storage/retention.js';
import type { BackupObserver } from '../../runtime/metrics.js';
import type { ChangeLog } from './change-log.js';
import { changeLogStatus } from './change-logs.js';
import { backupPath, withCondition } from './backup-status.js';
import { verificationStep } from './verify.js';
import type { ChangeLogs } from './change-logs.js';

export interface BackupReconcilerDeps {
  transport: ApiTransport;
  events: EventRecorder;
  backups: Store<EtcdBackup>;
  clusters: Store<EtcdCluster>;
  /** The restores that verifications make. */
  restores: Store<EtcdRestore>;
  pods: Store<V1Pod>;
  etcdClients: EtcdClients;
  clusterDomain: string;
  /** Runs Volume backups in a pod, with the claim mounted. */
  operatorImage: string;
  metrics: BackupObserver;
  /** The change logs of continuous backups; they end with the term. */
  changeLogs: ChangeLogs;
  /** Whether an EtcdBackup may name etcdEndpoints (--allow-backup-endpoints). */
  allowEndpoints: boolean;
}

const DEFAULT_TIMEOUT_S = 3600;
const RETRY_MS = 30_000;
/** How often a continuous backup's status (its RPO) is brought up to date. */
const CHANGE_LOG_STATUS_MS = 10_000;
const DEFAULT_CHUNK_SECONDS = 5;
const DEFAULT_CHUNK_MIB = 4;

/**
 * reconcile(namespace/name) for EtcdBackup: a one-shot backup runs once per spec generation; a periodic one
 * runs every backupIntervalInSecond and keeps what retention keeps; a continuous one also keeps its change
 * log running and reported; a verified one is restored and compared on its own schedule. A failure is
 * reported and retried.
 */
export function backupReconciler(d: BackupReconcilerDeps): Reconcile {
  return async (key, context): Promise<ReconcileResult | undefined> => {
    const [namespace = '', name = ''] = key.split('/');
    const backup = d.backups.get(namespace, name);
    if (!backup?.metadata.uid || backup.metadata.deletionTimestamp || !backup.spec.continuous) await d.changeLogs.stop(key);
    if (!backup?.metadata.uid || backup.metadata.deletionTimestamp) {
      d.metrics.gone(namespace, name);
      return undefined;
    }
    const lastSuccess = backup.status?.lastSuccessDate ? Date.parse(backup.status.lastSuccessDate) : Number.NaN;
    // Verified False is a failed verification; Unknown (inconclusive, or none could run) tells neither way.
    const verified = backup.status?.conditions?.find((c) => c.type === 'Verified')?.status;
    const verification = !backup.spec.verification ? 'off' : verified === 'True' ? 'passing' : verified === 'False' ? 'failing' : undefined;
    d.metrics.recorded(namespace, name, {
      ...(Number.isNaN(lastSuccess) ? {} : { lastSuccessAtMs: lastSuccess }),
      intervalSeconds: backup.spec.backupPolicy?.backupIntervalInSecond ?? 0, failing: backup.status?.succeeded === false,
      ...(verification ? { verification } : {}),
    });
    if (backup.spec.etcdEndpoints && !d.allowEndpoints) {
      await d.changeLogs.stop(key);
      return failed(d, backup, endpointsRefused(), context.log);
    }
    const backedUp = await backupStep(d, key, backup, context.log);
    // Verification follows its own schedule beside the backups; the sooner of the two wakes the backup again.
    const verifyInMs = await verificationStep(d, backup, context.log);
    const waits = [backedUp?.requeueAfterMs, verifyInMs].filter((ms): ms is number => ms !== undefined);
    return waits.length === 0 ? undefined : { requeueAfterMs: Math.min(...waits) };
  };
}

/** The backups themselves: a snapshot when one is due, the change log kept and reported. */
async function backupStep(d: BackupReconcilerDeps, key: string, backup: EtcdBackup, log: Logger): Promise<ReconcileResult | undefined> {
  const { namespace, name, uid = '' } = backup.metadata;
  const path = backupPath(backup);
  const involved = { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', name, namespace, uid };
  const generation = backup.metadata.generation;
  const intervalMs = (backup.spec.backupPolicy?.backupIntervalInSecond ?? 0) * 1000;
  let changeLog: ChangeLog | undefined;
  try {
    changeLog = backup.spec.continuous ? await ensureChangeLog(d, key, backup, log) : undefined;
  } catch (err) {
    if (!(err instanceof ConfigurationError)) throw err;
    return failed(d, backup, err, log);
  }
  const wanted = changeLog?.current.needsSnapshotFrom;
  // A gap in the log is closed by a full snapshot after it, taken now rather than at the next interval.
  const dueIn = (b: EtcdBackup): number | undefined => (wanted !== undefined && wanted > 0 && (b.status?.etcdRevision ?? -1) < wanted ? 0 : nextDue(b, intervalMs, Date.now()));
  const due = dueIn(backup);
  if (due !== 0) {
    // A snapshot pod that ended while no backup is due had its result recorded already, or is a second one an
    // earlier operator started by mistake: it goes.
    for (const pod of d.pods.ownedBy(uid).filter((p) => !p.metadata?.deletionTimestamp && ended(p))) await deleteSnapshotPod(d, pod);
    if (changeLog) await reportChangeLog(d, backup, changeLog, log);
    const wait = changeLog ? Math.min(due ?? CHANGE_LOG_STATUS_MS, CHANGE_LOG_STATUS_MS) : due;
    return wait === undefined ? undefined : { requeueAfterMs: wait };
  }
  // Due by the cache, which may not show yet the status of a backup just taken: a pass woken by the snapshot pod's
  // deletion can come first, and would take a one-shot backup again (seen on the lab: a second snapshot pod made
  // right after the first one's result, and left behind). Only the API server's own copy starts one; a snapshot
  // pod already running is one it started.
  if (!d.pods.ownedBy(uid).some((p) => !p.metadata?.deletionTimestamp)) {
    const live = await getIfExists<EtcdBackup>(d.transport, path);
    if (!live || dueIn(live) !== 0) return { requeueAfterMs: 1000 };
  }
  try {
    const taken = backup.spec.storageType === 'Volume' ? await takeInPod(d, backup, intervalMs) : await take(d, backup, intervalMs, log);
    if (!taken) return { requeueAfterMs: 2000 };
    d.metrics.taken(namespace, name, { atMs: Date.now(), bytes: taken.object.size, revision: taken.revision, seconds: taken.seconds });
    const held = taken.revisionAtLeast ? `revision ${taken.revision} or later (its own could not be read from it)` : `revision ${taken.revision}`;
    const message = `${taken.object.name}: ${held}, ${taken.object.size} bytes, sha256 ${taken.object.sha256}`;
    await writeStatus<BackupStatus, EtcdBackup>(d.transport, path, backup, (current) => ({
      ...current.status,
      succeeded: true, etcdVersion: taken.version, etcdRevision: taken.revision, lastSuccessDate: rfc3339(Date.now()),
      lastBackup: { path: taken.object.name, size: taken.object.size, sha256: taken.object.sha256, compression: taken.object.compression, ...(taken.object.keyId ? { keyId: taken.object.keyId } : {}) },
      ...(taken.kept === undefined ? {} : { backups: taken.kept }), observedGeneration: generation, reason: undefined, inProgress: undefined,
      conditions: withCondition(current.status?.conditions, { type: 'Succeeded', status: 'True', reason: 'BackupTaken', message }, generation),
    }));
    await d.events.record(involved, 'Normal', 'BackupTaken', message);
    log.info({ object: taken.object, revision: taken.revision }, 'backup taken');
    if (changeLog) {
      await reportChangeLog(d, backup, changeLog, log);
      return { requeueAfterMs: Math.min(intervalMs, CHANGE_LOG_STATUS_MS) };
    }
    return intervalMs > 0 ? { requeueAfterMs: intervalMs } : undefined;
  } catch (err) {
    return failed(d, backup, err, log);
  }
}

/**
 * etcdEndpoints make the operator read any etcd its network reaches (another team's, behind a NetworkPolicy that
 * admits the operator) into a bucket the requester names: a confused deputy. Whoever installs the operator
 * decides whether that is allowed; nothing is read until then.
 */
const endpointsRefused = (): ConfigurationError => new ConfigurationError('EndpointsNotAllowed',
  'spec.etcdEndpoints names an etcd the operator does not manage, which this operator is not allowed to back up: it would read any etcd its '
  + 'network reaches for whoever can create an EtcdBackup. Back up an EtcdCluster by spec.clusterName, or have the operator installed with '
  + '--allow-backup-endpoints (Helm: allowBackupEndpoints=true)');

/** Reports a failed backup (a condition, an Event, the metric) and when to try again. */
async function failed(d: BackupReconcilerDeps, backup: EtcdBackup, err: unknown, log: Logger): Promise<ReconcileResult> {
  const { namespace, name, uid = '', generation } = backup.metadata;
  const reason = err instanceof ConfigurationError ? err.reason : 'BackupFailed';
  const message = (err as Error).message;
  await writeStatus<BackupStatus, EtcdBackup>(d.transport, backupPath(backup), backup, (current) => ({
    ...current.status, succeeded: false, reason: message, observedGeneration: generation, inProgress: undefined,
    conditions: withCondition(current.status?.conditions, { type: 'Succeeded', status: 'False', reason, message }, generation),
  }));
  await d.events.record({ apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', name, namespace, uid }, 'Warning', reason, message);
  d.metrics.failed(namespace, name);
  log.warn({ err }, 'backup failed');
  const intervalMs = (backup.spec.backupPolicy?.backupIntervalInSecond ?? 0) * 1000;
  return { requeueAfterMs: intervalMs > 0 ? Math.min(intervalMs, RETRY_MS) : RETRY_MS };
}

/** Starts the backup's change log (again, after its spec changed) with the storage and key its spec names. */
async function ensureChangeLog(d: BackupReconcilerDeps, key: string, backup: EtcdBackup, log: Logger): Promise<ChangeLog> {
  const { spec } = backup;
  const { namespace } = backup.metadata;
  return d.changeLogs.ensure(key, `${backup.metadata.uid ?? ''}/${backup.metadata.generation ?? 0}`, async () => {
    const sealing = await backupSealing(d.transport, namespace, spec);
    const opened = await openStorage(d.transport, namespace, spec.s3);
    return {
      close: () => { opened.close(); },
      settings: {
        storage: opened.storage, base: opened.name, sealing, log: log.child({ changeLog: key }),
        chunkMs: (spec.continuous?.chunkSeconds ?? DEFAULT_CHUNK_SECONDS) * 1000,
        chunkBytes: (spec.continuous?.chunkMiB ?? DEFAULT_CHUNK_MIB) * 1024 * 1024,
        source: () => snapshotSource(spec, namespace, d.clusters, d.pods, d.etcdClients, d.clusterDomain),
        confirmed: (state) => { d.metrics.changeLog(namespace, backup.metadata.name, state); },
      },
    };
  });
}

/** Brings the change log's status and metrics up to date; a new gap is a Warning Event, once. */
async function reportChangeLog(d: BackupReconcilerDeps, backup: EtcdBackup, changeLog: ChangeLog, log: Logger): Promise<void> {
  const { namespace, name, uid = '', generation } = backup.metadata;
  const state = changeLog.current;
  const chunkSeconds = backup.spec.continuous?.chunkSeconds ?? DEFAULT_CHUNK_SECONDS;
  d.metrics.changeLog(namespace, name, state);
  const { changeLog: status, condition } = changeLogStatus(state, backup.status?.changeLog, Date.now(), chunkSeconds);
  const known = backup.status?.changeLog?.gaps ?? [];
  const fresh = (status.gaps ?? []).filter((g) => !known.some((k) => k.from === g.from && k.to === g.to));
  await writeStatus<BackupStatus, EtcdBackup>(d.transport, backupPath(backup), backup, (current) => ({
    ...current.status, changeLog: status, conditions: withCondition(current.status?.conditions, condition, generation),
  }));
  for (const g of fresh) {
    const message = `change log gap: revisions ${g.from ?? 0}-${g.to ?? 0} were compacted by etcd before they were stored; no point among them can be restored`;
    await d.events.record({ apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdBackup', name, namespace, uid }, 'Warning', 'ChangeLogGap', message);
    log.warn({ gap: g }, 'change log gap reported');
  }
}

/** 0 when a backup is due now; else how long until it is, or undefined when none is (a one-shot done). */
function nextDue(backup: EtcdBackup, intervalMs: number, now: number): number | undefined {
  const s = backup.status;
  if (!s?.succeeded || s.observedGeneration !== backup.metadata.generation) return 0;
  if (intervalMs === 0) return undefined;
  const since = now - Date.parse(s.lastSuccessDate ?? '');
  return Number.isFinite(since) && since < intervalMs ? intervalMs - since : 0;
}

/**
 * A Volume backup: a pod of the operator image with the claim mounted takes it; its result comes back as
 * the pod's termination message. Undefined while the pod runs.
 */
async function takeInPod(d: BackupReconcilerDeps, backup: EtcdBackup, intervalMs: number): Promise<Saved | undefined> {
  const { namespace, name, uid = '' } = backup.metadata;
  const pod = d.pods.ownedBy(uid).find((p) => !p.metadata?.deletionTimestamp);
  if (!pod) {
    const { spec } = backup;
    const source = await snapshotSource(spec, namespace, d.clusters, d.pods, d.etcdClients, d.clusterDomain);
    if (!spec.volume) throw new ConfigurationError('VolumeMissing', 'storageType Volume needs volume');
    // Checked here, so that a missing or bad key is a condition on the backup rather than a failed pod.
    const sealing = await backupSealing(d.transport, namespace, spec);
    await d.transport.call('POST', `/api/v1/namespaces/${namespace}/pods`, snapshotPod({
      namespace, backup: name, backupUid: uid, operatorImage: d.operatorImage, endpoints: source.endpoints, volume: spec.volume,
      compression: sealing.codec, ...(spec.encryption ? { encryption: spec.encryption } : {}),
      ...(source.tlsSecret ? { tlsSecret: source.tlsSecret } : {}), periodic: intervalMs > 0, retention: retentionOf(spec.backupPolicy),
      timeoutSeconds: spec.backupPolicy?.timeoutInSecond ?? DEFAULT_TIMEOUT_S,
    }));
    return undefined;
  }
  const phase = pod.status?.phase;
  if (!ended(pod)) return undefined;
  await deleteSnapshotPod(d, pod);
  const message = pod.status?.containerStatuses?.[0]?.state?.terminated?.message ?? '';
  if (phase === 'Failed') throw new Error(`the snapshot pod failed: ${message || pod.status?.reason || 'no message'}`);
  return JSON.parse(message) as Saved;
}

/** A snapshot pod that has run to its end, taken or failed. */
const ended = (pod: V1Pod): boolean => pod.status?.phase === 'Succeeded' || pod.status?.phase === 'Failed';

async function deleteSnapshotPod(d: BackupReconcilerDeps, pod: V1Pod): Promise<void> {
  await d.transport.call('DELETE', `/api/v1/namespaces/${pod.metadata?.namespace ?? ''}/pods/${pod.metadata?.name ?? ''}`).catch(ignoreStatus(404));
}

async function take(d: BackupReconcilerDeps, backup: EtcdBackup, intervalMs: number, log: Logger): Promise<Saved> {
  const { namespace } = backup.metadata;
  const spec = backup.spec;
  const source = await snapshotSource(spec, namespace, d.clusters, d.pods, d.etcdClients, d.clusterDomain);
  const sealing = await backupSealing(d.transport, namespace, spec);
  const opened = await openStorage(d.transport, namespace, spec.s3);
  const progress = progressInStatus(d, backup, log);
  try {
    return await saveSnapshot({
      sealing,
      etcd: source.etcd, endpoints: source.endpoints, storage: opened.storage, base: opened.name, periodic: intervalMs > 0,
      retention: retentionOf(spec.backupPolicy), changeLog: spec.continuous !== undefined, timeoutMs: (spec.backupPolicy?.timeoutInSecond ?? DEFAULT_TIMEOUT_S) * 1000, log,
      progress: progress.tell, inUse: snapshotsInUse(d.restores.list(namespace), spec.s3?.path),
    });
  } finally {
    opened.close();
    // The outcome is written after the last progress, never under it.
    await progress.written();
  }
}

/**
 * The snapshots of the backup at `path` that point-in-time restores under way start from (their chosen snapshot,
 * an object of the same bucket): a replay reads the change log after it as it goes, and a user's trial saw
 * retention remove both mid-replay (ChangeLogIncomplete). A restore of another store at the same path keeps them
 * too, which only keeps more.
 */
export function snapshotsInUse(restores: readonly EtcdRestore[], path: string | undefined): Set<string> {
  const underWay = restores.filter((r) => path !== undefined && r.spec.s3?.path === path && r.status?.phase !== 'Completed' && r.status?.phase !== 'Failed');
  return new Set(underWay.flatMap((r) => (r.status?.pointInTime?.snapshot ? [r.status.pointInTime.snapshot] : [])));
}

/**
 * Writes a snapshot's progress into the backup's status, one write at a time: a report that comes while one is
 * being written waits, and only the newest waiting one is written (the count only grows). Once the outcome is
 * about to be written (`written`), later reports are dropped: none may put back a snapshot that has ended.
 */
function progressInStatus(d: BackupReconcilerDeps, backup: EtcdBackup, log: Logger): { tell: (p: SnapshotProgress) => void; written: () => Promise<void> } {
  let waiting: SnapshotProgress | undefined;
  let writing: Promise<void> = Promise.resolve();
  let closed = false;
  const write = async (): Promise<void> => {
    const p = waiting;
    waiting = undefined;
    if (!p) return;
    const inProgress = { object: p.object, member: p.member, startedAt: rfc3339(p.startedAtMs), receivedBytes: p.receivedBytes, lastReceivedAt: rfc3339(p.lastReceivedAtMs) };
    await writeStatus<BackupStatus, EtcdBackup>(d.transport, backupPath(backup), backup, (current) => ({ ...current.status, inProgress }))
      .then(() => undefined, (err: unknown) => { log.debug({ err }, 'backup progress not written'); });
  };
  return {
    tell: (p) => {
      if (closed) return;
      const queued = waiting !== undefined;
      waiting = p;
      if (!queued) writing = writing.then(write);
    },
    written: () => {
      closed = true;
      return writing;
    },
  };
}

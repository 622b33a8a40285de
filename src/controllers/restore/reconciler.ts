import type { Logger } from '../../runtime/log.js';
import type { ApiTransport } from '../../runtime/transport.js';
import { ignoreStatus } from '../../runtime/transport.js';
import type { Reconcile, ReconcileResult } from '../../runtime/controller.js';
import type { Store } from '../../runtime/store.js';
import type { EventRecorder } from '../../runtime/events.js';
import { writeStatus } from '../../runtime/status.js';
import { rfc3339, timeMs } from '../../runtime/time.js';
import { GROUP, VERSION, clusterPath } from '../../api/etcd-cluster.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';
import { restorePath } from '../../api/etcd-backup.js';
import { revisionBumpOf } from '../../api/etcd-backup.js';
import type { EtcdRestore, RestoreStatus } from '../../api/etcd-backup.js';
import { ANNOTATION_RESTORED_BY, ANNOTATION_RESTORED_BY_UID, ANNOTATION_VERIFIES } from '../../k8s/labels.js';
import { ownedBy, owningClusterName } from '../../k8s/owner.js';
import { ConfigurationError } from '../cluster/tls.js';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { openStorage, readKeyRing } from '../backup/storage-for.js';
import type { OpenedStorage } from '../backup/storage-for.js';
import { snapshotSource } from '../backup/source.js';
import type { EtcdClients } from '../cluster/tls.js';
import { restorableSnapshot } from '../../storage/snapshot-read.js';
import type { KeyRing } from '../../storage/sealed.js';
import { changeLogPrefix, chunksOf, pointInTimePlan, revisionAt } from '../../storage/change-log.js';
import { datedPeriodicBackups, heldRevisions } from '../../storage/naming.js';
import { ReplayError, ReplayInterrupted, readChunk, replay } from './replay.js';
import { restoredShift } from './bumped-revisions.js';
import { carriesOneShotRestore, clusterSettled, podReady } from '../cluster/views.js';
import { backupRefusal, snapshotRefused } from './backup-refusal.js';
import { serviceRecheck } from './service-recheck.js';
import type { LeaseHolds } from './lease-hold.js';
import type { EtcdClient } from '../../etcd/client.js';
import { clientUrl, serviceUrl } from '../../etcd/identity.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { clusterAddress, tlsSecretNames } from '../../k8s/tls-secrets.js';

export interface RestoreReconcilerDeps {
  transport: ApiTransport;
  events: EventRecorder;
  restores: Store<EtcdRestore>;
  clusters: Store<EtcdCluster>;
  /** For a point-in-time restore: the restored cluster's members, to replay the change log into. */
  pods: Store<V1Pod>;
  /** The restored cluster's client Service: a restore is Completed once clients can reach the cluster. */
  services: Store<V1Service>;
  etcdClients: EtcdClients;
  clusterDomain: string;
  /** The restored stores' leases, kept alive until their restores end. */
  leaseHolds: LeaseHolds;
}

type PointInTime = NonNullable<RestoreStatus['pointInTime']>;
type Outcome = {
  phase: 'Restoring' | 'Completed' | 'Failed'; reason: string; message: string; pointInTime?: PointInTime;
  /** Restoring: when to look again, if sooner than RESTORING_RECHECK_MS (nothing watched will tell). */
  recheckInMs?: number;
};

/** A restore under way is looked at this often; its cluster's, pods' and client Service's changes bring it sooner. */
const RESTORING_RECHECK_MS = 2000;
/** The phase between choosing a point in time and making the cluster. */
const POINT_CHOSEN = 'PointChosen';
/** A replay runs this long per reconcile, then yields the worker; the next goes on from the store's revision. */
const REPLAY_SLICE_MS = 5_000;

/**
 * reconcile(namespace/name) for EtcdRestore: opens the backup (probeBackup; its members check every byte), then
 * creates the named EtcdCluster marked as restored by it, whose first members start from the snapshot (and, for a
 * point in time, replays the change log into it); done when that cluster serves the restored data at its final
 * membership. Restores only into a new cluster: an existing one is never touched.
 */
export function restoreReconciler(d: RestoreReconcilerDeps): Reconcile {
  // How far this process's replays have written each restored store (see ReplayProgress).
  const written: ReplayProgress = new Map();
  return async (key, { log }): Promise<ReconcileResult | undefined> => {
    const [namespace = '', name = ''] = key.split('/');
    const restore = d.restores.get(namespace, name);
    const phase = restore?.status?.phase;
    if (!restore?.metadata.uid || restore.metadata.deletionTimestamp || phase === 'Failed' || (phase === 'Completed' && !comparedLater(restore))) {
      for (const k of written.keys()) if (k.startsWith(`${restore?.metadata.uid ?? key}/`)) written.delete(k);
      d.leaseHolds.release(key);
      return undefined;
    }
    if (phase === 'Completed') {
      // Held again after an operator restart, until the verification has compared and deleted it.
      const cluster = d.clusters.get(namespace, restore.spec.etcdCluster.name);
      if (cluster && madeBy(cluster, restore)) d.leaseHolds.hold(key, () => members(d, cluster));
      return undefined;
    }

    const outcome = await progress(d, restore, log, key, written);
    const path = restorePath(namespace, name);
    const generation = restore.metadata.generation;
    await writeStatus<RestoreStatus, EtcdRestore>(d.transport, path, restore, (current) => {
      const pointInTime = outcome.pointInTime ?? current.status?.pointInTime;
      const sameTime = JSON.stringify(pointInTime) === JSON.stringify(current.status?.pointInTime);
      const sameMessage = current.status?.conditions?.[0]?.message === outcome.message;
      if (current.status?.phase === outcome.phase && current.status.reason === outcome.reason && sameTime && sameMessage) return undefined;
      const now = rfc3339(Date.now());
      return {
        phase: outcome.phase, reason: outcome.reason, observedGeneration: generation, ...(pointInTime ? { pointInTime } : {}),
        conditions: [{ type: 'Completed', status: outcome.phase === 'Completed' ? 'True' : 'False', reason: outcome.reason, message: outcome.message, lastTransitionTime: now, observedGeneration: generation }],
      };
    });
    if (outcome.phase !== restore.status?.phase || outcome.reason !== restore.status.reason) {
      const involved = { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdRestore', name, namespace, uid: restore.metadata.uid };
      await d.events.record(involved, outcome.phase === 'Failed' ? 'Warning' : 'Normal', outcome.reason, outcome.message);
    }
    if (outcome.phase === 'Restoring') return { requeueAfterMs: outcome.recheckInMs ?? RESTORING_RECHECK_MS };
    if (!(outcome.phase === 'Completed' && comparedLater(restore))) d.leaseHolds.release(key);
    return undefined;
  };
}

/**
 * The restore that made the cluster an object (a member pod, the client Service) belongs to, as a key, if any. The
 * restore ends once the cluster serves, and what tells of that may be the pod's or the Service's own change alone.
 */
export function restoreKeysOf(o: V1Pod | V1Service, clusters: Store<EtcdCluster>): string[] {
  const namespace = o.metadata?.namespace ?? '';
  const owner = owningClusterName(o);
  const restore = owner ? clusters.get(namespace, owner)?.metadata.annotations?.[ANNOTATION_RESTORED_BY] : undefined;
  return restore ? [`${namespace}/${restore}`] : [];
}

/**
 * A verification's restore: its store is compared with the live one after it is Completed, so the snapshot's
 * leases stay held until the verification deletes it (one that ran out would change the store compared).
 */
const comparedLater = (restore: EtcdRestore): boolean => restore.metadata.annotations?.[ANNOTATION_VERIFIES] !== undefined;

/**
 * Whether this restore made the cluster: its name and UID on it. A cluster made before the UID was recorded
 * counts only for a restore already under way (a new one of a reused name has no status yet).
 */
function madeBy(cluster: EtcdCluster, restore: EtcdRestore): boolean {
  const annotations = cluster.metadata.annotations ?? {};
  if (annotations[ANNOTATION_RESTORED_BY] !== restore.metadata.name) return false;
  const uid = annotations[ANNOTATION_RESTORED_BY_UID];
  return uid === undefined ? restore.status?.phase === 'Restoring' : uid === restore.metadata.uid;
}

async function progress(d: RestoreReconcilerDeps, restore: EtcdRestore, log: Logger, key: string, written: ReplayProgress): Promise<Outcome> {
  const { namespace } = restore.metadata;
  const target = restore.spec.etcdCluster.name;
  const cluster = d.clusters.get(namespace, target);
  if (cluster) {
    if (!madeBy(cluster, restore)) {
      return { phase: 'Failed', reason: 'ClusterExists', message: `EtcdCluster ${target} already exists; a restore only creates a new cluster, and the existing one was not touched` };
    }
    // From before its first member starts until the restore ends, no lease of the snapshot runs out.
    d.leaseHolds.hold(key, () => members(d, cluster));
    const available = cluster.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
    const pointInTime = restore.status?.pointInTime;
    // Replayed once settled, every member there and ready. Members an earlier operator restored are swapped for
    // ones without their one-shot restore steps first, and the status can say Running from the pass before such a
    // swap began, so the pods must show it done too: a replay that began under the swap read the store's revisions
    // from a member on its way out or in (seen: StoreCompacted).
    if (cluster.status?.bootstrapped && available && pointInTime && (pointInTime.replayedThrough ?? 0) < (pointInTime.revision ?? 0)) {
      const pods = d.pods.ownedBy(cluster.metadata.uid ?? '');
      // Every member there and ready: a pod with the steps gone from the cache before its successor came is no swap done.
      const swapped = pods.length >= cluster.spec.size && pods.every(podReady) && !pods.some(carriesOneShotRestore);
      return clusterSettled(cluster) && swapped ? replayed(d, restore, cluster, pointInTime, written, log) : { phase: 'Restoring', reason: 'ClusterStarting', message: `EtcdCluster ${target} is settling before the change log is replayed` };
    }
    if (cluster.status?.bootstrapped && available) {
      const waiting = await notYetServing(d, cluster);
      if (waiting) {
        return { phase: 'Restoring', reason: 'ClusterSettling', message: `EtcdCluster ${target} holds the restored data; ${waiting.what}`, ...(waiting.recheckInMs ? { recheckInMs: waiting.recheckInMs } : {}) };
      }
      if (pointInTime) {
        return {
          phase: 'Completed', reason: 'ClusterRestored',
          message: `EtcdCluster ${target} was at the source's revision ${pointInTime.replayedThrough ?? 0}, as the source was, when its clients were let in: ${pointInTime.snapshot ?? ''} (revision ${pointInTime.snapshotRevision ?? 0}) and its change log replayed${bumpNote(pointInTime.revisionBump ?? 0)}`,
        };
      }
      const revision = Math.max(0, ...(cluster.status.memberStatus ?? []).map((m) => m.revision ?? 0));
      return { phase: 'Completed', reason: 'ClusterRestored', message: `EtcdCluster ${target} is Available from the snapshot (its revision now ${revision})${bumpNote(revisionBumpOf(restore.spec))}` };
    }
    const refused = snapshotRefused(d.pods.ownedBy(cluster.metadata.uid ?? ''));
    if (refused) {
      return { phase: 'Failed', reason: refused.reason, message: `${refused.message}; EtcdCluster ${target} cannot start from it (delete it, and restore from another backup)` };
    }
    return { phase: 'Restoring', reason: 'ClusterStarting', message: `EtcdCluster ${target} is starting from the snapshot` };
  }
  if (restore.status?.phase === 'Restoring' && restore.status.reason !== POINT_CHOSEN) {
    // The cache may not have seen the cluster this restore made yet (its watch lags): only the API server's own
    // answer that it is gone fails the restore, for good.
    const live = await d.transport.call('GET', clusterPath(namespace, target)).catch(ignoreStatus(404));
    if (live) return { phase: 'Restoring', reason: restore.status.reason ?? 'ClusterCreated', message: `EtcdCluster ${target} exists; waiting to see it start` };
    return { phase: 'Failed', reason: 'ClusterDeleted', message: `EtcdCluster ${target} was deleted during the restore` };
  }
  const chosen = restore.status?.pointInTime;
  if (restore.spec.pointInTime && !chosen) {
    // Recorded before the cluster is made: its members fetch the snapshot named here.
    const point = await choosePoint(d, restore, log);
    if ('phase' in point) return point;
    return await probeBackup(d, restore, log, point.snapshot) ?? {
      phase: 'Restoring', reason: POINT_CHOSEN, pointInTime: point,
      message: `revision ${point.revision ?? 0}: from ${point.snapshot ?? ''} and the change log after it (its every chunk checked)`,
    };
  }
  if (!chosen) {
    const refused = await probeBackup(d, restore, log);
    if (refused) return refused;
  }
  await d.transport.call('POST', `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`, {
    apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster',
    metadata: {
      name: target, annotations: { [ANNOTATION_RESTORED_BY]: restore.metadata.name, [ANNOTATION_RESTORED_BY_UID]: restore.metadata.uid ?? '' },
      // A verification's cluster is disposable: deleting its restore deletes it (the operator deletes no EtcdCluster itself).
      ...(restore.metadata.annotations?.[ANNOTATION_VERIFIES] ? { ownerReferences: [ownedBy('EtcdRestore', restore.metadata.name, restore.metadata.uid ?? '')] } : {}),
    },
    spec: restore.spec.clusterSpec ?? { size: 3 },
  }).catch(ignoreStatus(409));
  if (!chosen) return { phase: 'Restoring', reason: 'ClusterCreated', message: `EtcdCluster ${target} created; its members start from the snapshot` };
  return {
    phase: 'Restoring', reason: 'ClusterCreated',
    message: `EtcdCluster ${target} created from ${chosen.snapshot ?? ''}; the change log is replayed up to revision ${chosen.revision ?? 0} once it is up`,
  };
}

/** What a user reading the revisions must know: by how much they were raised, and that older ones are compacted. */
function bumpNote(bump: number): string {
  return bump > 0 ? `; its revisions raised by ${bump} and the older ones compacted (clients watching from an older revision list again)` : '';
}

/** Opens the restore's bucket and keys; a configuration error is the outcome instead. */
async function openSource(d: RestoreReconcilerDeps, restore: EtcdRestore): Promise<{ opened: OpenedStorage; keys: KeyRing } | Outcome> {
  const { spec } = restore;
  try {
    const keys = spec.encryption ? await readKeyRing(d.transport, restore.metadata.namespace, spec.encryption.keySecret) : new Map<string, Buffer>();
    return { keys, opened: await openStorage(d.transport, restore.metadata.namespace, spec.s3) };
  } catch (err) {
    if (err instanceof ConfigurationError) return { phase: 'Failed', reason: err.reason, message: err.message };
    throw err;
  }
}

/**
 * The revision to restore (given, or the last one the log had received at the given time) and the snapshot
 * to start from; every chunk of the log up to it is read through its checksum and key before anything is made.
 */
async function choosePoint(d: RestoreReconcilerDeps, restore: EtcdRestore, log: Logger): Promise<PointInTime | Outcome> {
  const source = await openSource(d, restore);
  if ('phase' in source) return source;
  const { opened, keys } = source;
  const unavailable = (message: string): Outcome => ({ phase: 'Failed', reason: 'PointInTimeUnavailable', message });
  try {
    const names = await opened.storage.list(opened.name);
    const chunks = chunksOf(names, opened.name);
    const at = restore.spec.pointInTime ?? {};
    const pinned = at.revision === undefined ? await revisionAt(chunks, Date.parse(at.time ?? ''), (c) => readChunk({ storage: opened.storage, keys }, c)) : { revision: at.revision };
    if ('refused' in pinned) return unavailable(`${opened.name}: ${pinned.refused}`);
    const target = pinned.revision;
    const snapshots = await heldRevisions(datedPeriodicBackups(names, opened.name), names, target, opened.storage);
    const plan = pointInTimePlan(snapshots, chunks, target);
    if ('refused' in plan) return unavailable(`${opened.name}: ${plan.refused}`);
    for (const chunk of plan.chunks) await readChunk({ storage: opened.storage, keys }, chunk);
    log.info({ target, snapshot: plan.snapshot.name, chunks: plan.chunks.length }, 'point in time chosen; its change log checked');
    return { revision: target, snapshot: plan.snapshot.name, snapshotRevision: plan.snapshot.revision };
  } catch (err) {
    return refusal(err, opened.name);
  } finally {
    opened.close();
  }
}

/**
 * The source's revision through which this process has itself written each restored store, by restore and cluster
 * UID. The pass after a slice can read the restore from a cache that does not yet show the slice's status; from
 * there it would check every revision the slice wrote again, one read after another, and write nothing new (seen
 * on the lab: every other pass). Only this process's own confirmed writes are here, so a restart starts from status.
 */
type ReplayProgress = Map<string, number>;

/** Replays the change log into the restored cluster, a slice at a time; Completed once it is at the revision asked for. */
async function replayed(d: RestoreReconcilerDeps, restore: EtcdRestore, cluster: EtcdCluster, pit: PointInTime, written: ReplayProgress, log: Logger): Promise<Outcome> {
  const store = `${restore.metadata.uid ?? ''}/${cluster.metadata.uid ?? ''}`;
  const target = pit.revision ?? 0;
  const name = restore.spec.etcdCluster.name;
  const done = (through: number): Outcome => ({
    phase: 'Restoring', reason: 'Replayed', pointInTime: { ...pit, replayedThrough: through },
    message: `EtcdCluster ${name} is at the source's revision ${through}, as the source was; its clients are let in now`,
  });
  const source = await openSource(d, restore);
  if ('phase' in source) return source;
  const { opened, keys } = source;
  try {
    const ready = await snapshotSource({ clusterName: name, storageType: 'S3' }, restore.metadata.namespace, d.clusters, d.pods, d.etcdClients, d.clusterDomain);
    const endpoint = ready.endpoints[0] ?? '';
    // The snapshot's revision as the choice knew it: the one it holds, or the lowest (its name's).
    const named = pit.snapshotRevision ?? 0;
    if (pit.revisionBump === undefined) {
      // Found once, before anything is replayed, and recorded at once: the replay's own revisions are past it later,
      // and a restart goes on from it. The store says what it was made with, not the spec.
      const found = await restoredShift(ready.etcd, endpoint, named, revisionBumpOf(restore.spec));
      log.info({ shift: found }, 'the restored store\'s revisions, as the source\'s are numbered in it');
      return {
        phase: 'Restoring', reason: 'Replaying', pointInTime: { ...pit, revisionBump: found.bump, ...(found.bump > 0 ? { snapshotHeld: found.held } : {}) },
        message: `replaying the change log from revision ${found.held} to ${target}${found.bump > 0 ? `, each ${found.bump} higher in the restored store` : ''}`,
      };
    }
    const shift = { held: pit.snapshotHeld ?? named, bump: pit.revisionBump };
    const through = await replay({
      storage: opened.storage, keys, etcd: ready.etcd, endpoint, chunks: chunksOf(await opened.storage.list(changeLogPrefix(opened.name)), opened.name),
      target, checkedThrough: Math.max(pit.replayedThrough ?? 0, shift.held, written.get(store) ?? 0), shift, untilMs: Date.now() + REPLAY_SLICE_MS, log,
    });
    written.set(store, through);
    if (through >= target) return done(through);
    return { phase: 'Restoring', reason: 'Replaying', pointInTime: { ...pit, replayedThrough: through }, message: `replaying the change log: at revision ${through} of ${target}` };
  } catch (err) {
    // Tried again on the next pass from where it got, the progress and the cause in status meanwhile.
    if (err instanceof ReplayInterrupted) {
      written.set(store, err.through);
      log.warn({ err: err.cause, through: err.through }, 'change log replay interrupted; trying again');
      return { phase: 'Restoring', reason: 'Replaying', pointInTime: { ...pit, replayedThrough: err.through }, message: `replaying the change log: at revision ${err.through} of ${target}; trying again after: ${(err.cause as Error).message}` };
    }
    // What was found (the shift, how far it got) stays in status beside the reason.
    return { ...refusal(err, opened.name), pointInTime: pit };
  } finally {
    opened.close();
  }
}

/** How the operator reaches the restored cluster: its client (with the cluster's certificate, if TLS) and its address. */
async function reach(d: RestoreReconcilerDeps, cluster: EtcdCluster): Promise<{ etcd: EtcdClient; address: ClusterAddress }> {
  const { namespace, name } = cluster.metadata;
  return { etcd: await d.etcdClients.forCluster(namespace, tlsSecretNames(name, cluster.spec)), address: clusterAddress(name, namespace, cluster.spec, d.clusterDomain) };
}

/** The restored cluster's pods that are not being deleted, ready or not. */
const livePods = (d: RestoreReconcilerDeps, cluster: EtcdCluster): V1Pod[] =>
  d.pods.ownedBy(cluster.metadata.uid ?? '').filter((p) => !p.metadata?.deletionTimestamp);

/** The restored cluster's members as they are now, ready or not (a hold must reach the first before it is ready). */
async function members(d: RestoreReconcilerDeps, cluster: EtcdCluster): Promise<{ etcd: EtcdClient; endpoints: string[] }> {
  const { etcd, address } = await reach(d, cluster);
  return { etcd, endpoints: livePods(d, cluster).map((p) => clientUrl(address, p.metadata?.name ?? '')) };
}

/**
 * What the restored cluster still lacks before a client can use it as restored, or undefined once it serves at
 * its final membership: settled, no member on an earlier operator's one-shot restore steps (each is replaced right
 * after the restore, and a client sent to one being replaced fails), as many members as asked for, and its client Service answering
 * as a client would reach it (a Service just made has no ready endpoint on the nodes' proxies yet).
 */
async function notYetServing(d: RestoreReconcilerDeps, cluster: EtcdCluster): Promise<{ what: string; recheckInMs?: number } | undefined> {
  const pods = livePods(d, cluster);
  if (!clusterSettled(cluster)) return { what: 'waiting for it to settle' };
  if (pods.some(carriesOneShotRestore)) return { what: 'its members are moving off restore steps an earlier operator gave them' };
  if (pods.length !== cluster.spec.size || !pods.every(podReady)) return { what: `${pods.filter(podReady).length} of ${cluster.spec.size} members ready` };
  const service = d.services.get(cluster.metadata.namespace, `${cluster.metadata.name}-client`);
  if (!service) return { what: 'waiting for its client Service' };
  const readySince = pods.map((p) => timeMs(p.status?.conditions?.find((c) => c.type === 'Ready')?.lastTransitionTime));
  const { connectWithinMs, recheckInMs } = serviceRecheck(Math.max(timeMs(service.metadata?.creationTimestamp), ...readySince), Date.now());
  const { etcd, address } = await reach(d, cluster);
  const answer = await etcd.status(serviceUrl(address), connectWithinMs === undefined ? {} : { connectWithinMs }).then(() => undefined, (err: unknown) => (err as Error).message);
  // A member answered through the Service with a certificate of the cluster's CA that does not name the Service
  // (static TLS made without that name): it serves; a client must connect by a name its certificate holds.
  if (answer === undefined || /does not match certificate's altnames/.test(answer)) return undefined;
  return { what: `its client Service does not answer yet (${answer})`, ...(recheckInMs === undefined ? {} : { recheckInMs }) };
}

/** What a backup that cannot be read is reported as; anything else is thrown again (and retried). */
function refusal(err: unknown, object: string): Outcome {
  const refused = backupRefusal(err);
  if (refused) return { phase: 'Failed', ...refused };
  if (err instanceof ReplayError) return { phase: 'Failed', reason: err.reason, message: err.message };
  const code = (err as { name?: string }).name;
  if (code === 'NoSuchKey' || code === 'NoSuchBucket') return { phase: 'Failed', reason: 'BackupNotFound', message: `${object}: ${code}` };
  throw err;
}

/**
 * Opens the backup (or the chosen snapshot of a continuous one) as the members will, and reads its first block
 * only, before anything is created: a missing object, a missing sha256, a key the Secret lacks or a seal that is
 * not this one's fail the restore here, at once. The whole object is read once, by each member's fetch step,
 * which checks every byte (the sha256, every sealed frame, etcd's own hash at its end) as it streams to disk, and
 * refuses it before etcd ever starts on it (snapshotRefused). A failure is reported; else undefined.
 */
async function probeBackup(d: RestoreReconcilerDeps, restore: EtcdRestore, log: Logger, snapshot?: string): Promise<Outcome | undefined> {
  // A volume is only mounted into the members; they check the checksum as they fetch.
  if (restore.spec.backupStorageType === 'Volume') return undefined;
  const source = await openSource(d, restore);
  if ('phase' in source) return source;
  const { opened, keys } = source;
  const object = snapshot ?? opened.name;
  try {
    // Leaving the loop ends the read: the reader lets its source go, and closing the store closes its connection.
    for await (const block of restorableSnapshot(object, await opened.storage.openUnchecked(object), keys)) {
      log.info({ object, firstBlock: block.length }, 'backup opened; its members check every byte as they fetch it');
      break;
    }
    return undefined;
  } catch (err) {
    return refusal(err, object);
  } finally {
    opened.close();
  }
}

import type { Logger } from 'pino';
import type { ApiTransport } from '../../runtime/transport.js';
import { ignoreStatus } from '../../runtime/transport.js';
import type { Reconcile, ReconcileResult } from '../../runtime/controller.js';
import type { Store } from '../../runtime/store.js';
import type { EventRecorder } from '../../runtime/events.js';
import { writeStatus } from '../../runtime/status.js';
import { rfc3339 } from '../../runtime/time.js';
import { GROUP, VERSION } from '../../api/etcd-cluster.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';
import type { EtcdRestore, RestoreStatus } from '../../api/etcd-backup.js';
import { ANNOTATION_RESTORED_BY } from '../../k8s/labels.js';
import { ChecksumMismatch } from '../../storage/storage.js';
import { ConfigurationError } from '../cluster/tls.js';
import { openStorage, readKeyRing } from '../backup/storage-for.js';
import { SealError, unseal } from '../../storage/sealed.js';

export interface RestoreReconcilerDeps {
  transport: ApiTransport;
  events: EventRecorder;
  restores: Store<EtcdRestore>;
  clusters: Store<EtcdCluster>;
}

type Outcome = { phase: 'Restoring' | 'Completed' | 'Failed'; reason: string; message: string };

/**
 * reconcile(namespace/name) for EtcdRestore: checks the backup (its sha256), then creates the named
 * EtcdCluster marked as restored by it, whose first members start from the snapshot; done when that
 * cluster is Available. Restores only into a new cluster: an existing one is never touched.
 */
export function restoreReconciler(d: RestoreReconcilerDeps): Reconcile {
  return async (key, { log }): Promise<ReconcileResult | undefined> => {
    const [namespace = '', name = ''] = key.split('/');
    const restore = d.restores.get(namespace, name);
    if (!restore?.metadata.uid || restore.metadata.deletionTimestamp) return undefined;
    const phase = restore.status?.phase;
    if (phase === 'Completed' || phase === 'Failed') return undefined;

    const outcome = await progress(d, restore, log);
    const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdrestores/${name}`;
    const generation = restore.metadata.generation;
    await writeStatus<RestoreStatus, EtcdRestore>(d.transport, path, restore, (current) => {
      if (current.status?.phase === outcome.phase && current.status.reason === outcome.reason) return undefined;
      const now = rfc3339(Date.now());
      return {
        phase: outcome.phase, reason: outcome.reason, observedGeneration: generation,
        conditions: [{ type: 'Completed', status: outcome.phase === 'Completed' ? 'True' : 'False', reason: outcome.reason, message: outcome.message, lastTransitionTime: now, observedGeneration: generation }],
      };
    });
    if (outcome.phase !== restore.status?.phase || outcome.reason !== restore.status.reason) {
      const involved = { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdRestore', name, namespace, uid: restore.metadata.uid };
      await d.events.record(involved, outcome.phase === 'Failed' ? 'Warning' : 'Normal', outcome.reason, outcome.message);
    }
    return outcome.phase === 'Restoring' ? { requeueAfterMs: 2000 } : undefined;
  };
}

async function progress(d: RestoreReconcilerDeps, restore: EtcdRestore, log: Logger): Promise<Outcome> {
  const { namespace } = restore.metadata;
  const target = restore.spec.etcdCluster.name;
  const cluster = d.clusters.get(namespace, target);
  if (cluster) {
    if (cluster.metadata.annotations?.[ANNOTATION_RESTORED_BY] !== restore.metadata.name) {
      return { phase: 'Failed', reason: 'ClusterExists', message: `EtcdCluster ${target} already exists; a restore only creates a new cluster, and the existing one was not touched` };
    }
    const available = cluster.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True');
    if (cluster.status?.bootstrapped && available) {
      const revision = Math.max(0, ...(cluster.status.memberStatus ?? []).map((m) => m.revision ?? 0));
      return { phase: 'Completed', reason: 'ClusterRestored', message: `EtcdCluster ${target} is Available from the snapshot (revision ${revision})` };
    }
    return { phase: 'Restoring', reason: 'ClusterStarting', message: `EtcdCluster ${target} is starting from the snapshot` };
  }
  if (restore.status?.phase === 'Restoring') {
    return { phase: 'Failed', reason: 'ClusterDeleted', message: `EtcdCluster ${target} was deleted during the restore` };
  }
  const checked = await checkBackup(d, restore, log);
  if (checked) return checked;
  await d.transport.call('POST', `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`, {
    apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster',
    metadata: { name: target, annotations: { [ANNOTATION_RESTORED_BY]: restore.metadata.name } },
    spec: restore.spec.clusterSpec ?? { size: 3 },
  }).catch(ignoreStatus(409));
  return { phase: 'Restoring', reason: 'ClusterCreated', message: `EtcdCluster ${target} created; its members start from the snapshot` };
}

/** Reads the whole backup through its checksum (and keys) before anything is created; a failure it reports, or undefined. */
async function checkBackup(d: RestoreReconcilerDeps, restore: EtcdRestore, log: Logger): Promise<Outcome | undefined> {
  const { spec } = restore;
  // A volume is only mounted into the members; they check the checksum as they fetch.
  if (spec.backupStorageType === 'Volume') return undefined;
  let opened;
  let keys;
  try {
    keys = spec.encryption ? await readKeyRing(d.transport, restore.metadata.namespace, spec.encryption.keySecret) : new Map<string, Buffer>();
    opened = await openStorage(d.transport, restore.metadata.namespace, spec.s3);
  } catch (err) {
    if (err instanceof ConfigurationError) return { phase: 'Failed', reason: err.reason, message: err.message };
    throw err;
  }
  try {
    let size = 0;
    // Opened as the members will open it: an encrypted backup's every frame is checked against its tag.
    for await (const chunk of unseal(opened.storage.get(opened.name), keys, opened.name)) size += chunk.length;
    log.info({ object: opened.name, size }, 'backup checked');
    return undefined;
  } catch (err) {
    if (err instanceof ChecksumMismatch) return { phase: 'Failed', reason: 'ChecksumMismatch', message: err.message };
    if (err instanceof SealError) return { phase: 'Failed', reason: `Backup${err.reason}`, message: err.message };
    const code = (err as { name?: string }).name;
    if (code === 'NoSuchKey' || code === 'NoSuchBucket') return { phase: 'Failed', reason: 'BackupNotFound', message: `${opened.name}: ${code}` };
    throw err;
  } finally {
    opened.close();
  }
}

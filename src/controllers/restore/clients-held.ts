import type { EtcdCluster } from '../../api/etcd-cluster.js';
import type { EtcdRestore } from '../../api/etcd-backup.js';
import { ANNOTATION_RESTORED_BY_UID } from '../../k8s/labels.js';

/**
 * Whether the cluster that `restore` (the EtcdRestore its annotation names, if any) made must serve no client yet:
 * a point-in-time restore's store passes through revisions on its way to the point (the snapshot's, then each
 * replayed one), and a client, or a kube-apiserver pointed at it, must never see one of those as the restored
 * state. Its client Service is made once the change log is replayed to the point. A restore that failed keeps its
 * clients away too (its store is not what was asked for): deleting the EtcdRestore lets them in.
 */
export function clientsHeld(cluster: EtcdCluster, restore: EtcdRestore | undefined): boolean {
  if (!restore?.spec.pointInTime || restore.status?.phase === 'Completed') return false;
  const uid = cluster.metadata.annotations?.[ANNOTATION_RESTORED_BY_UID];
  if (uid !== undefined && uid !== restore.metadata.uid) return false;
  const point = restore.status?.pointInTime;
  return point?.revision === undefined || (point.replayedThrough ?? 0) < point.revision;
}

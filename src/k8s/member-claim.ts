import type { V1PersistentVolumeClaim, V1PersistentVolumeClaimSpec } from '@kubernetes/client-node';
import type { ClusterAddress } from '../etcd/identity.js';
import { clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/** A member's data volume claim, named as the member; collected with the cluster. */
export function memberClaim(a: ClusterAddress, clusterUid: string, member: string, spec: V1PersistentVolumeClaimSpec): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: { name: member, namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)] },
    spec,
  };
}

import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { ClusterAddress } from '../etcd/identity.js';
import { clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/** Voluntary disruptions (drains) may never take the members below a quorum. */
export function memberDisruptionBudget(a: ClusterAddress, clusterUid: string, minAvailable: number): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1', kind: 'PodDisruptionBudget',
    metadata: { name: a.cluster, namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)] },
    spec: { minAvailable, selector: { matchLabels: clusterLabels(a.cluster) } },
  };
}

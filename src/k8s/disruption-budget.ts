import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { ClusterAddress } from '../etcd/identity.js';
import { quorum } from '../etcd/planner.js';
import { clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/**
 * Members that must stay up under voluntary disruption (drains): one member at a time may go, and never
 * below a quorum, so a cluster of one or two members may not be drained at all.
 */
export const minAvailable = (members: number): number => Math.max(quorum(members), members - 1);

/** The PodDisruptionBudget over a cluster's members. */
export function memberDisruptionBudget(a: ClusterAddress, clusterUid: string, minAvailable: number): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1', kind: 'PodDisruptionBudget',
    metadata: { name: a.cluster, namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)] },
    spec: { minAvailable, selector: { matchLabels: clusterLabels(a.cluster) } },
  };
}

import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { ClusterAddress } from '../etcd/identity.js';
import { clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/**
 * No member pod may be evicted, ready or not. A drain does not take members away; the operator moves them:
 * when a member's node is cordoned it adds the member's replacement elsewhere, then removes the member and
 * deletes its pod (a deletion, which the budget does not govern), and the drain then finds the node empty. So
 * a drain never costs the cluster a member, even one of one or two members, and holds back while the
 * replacement cannot be placed.
 *
 * minAvailable is one more than the members there can be, so no pod is ever spare: `maxUnavailable: 0` is not
 * enough, as Kubernetes counts the pods expected from the EtcdCluster's scale subresource (spec.size), and
 * while a replacement has joined there is one more; the lab saw a drain evict the member being replaced in
 * that window, before its removal, leaving a member whose volume could only come back on the cordoned node.
 * Unready members are not evictable either (IfHealthyBudget): a member is unready for a moment whenever
 * leadership moves. A broken member on a drained node is the operator's to repair.
 */
export const budgetMinAvailable = (size: number, members: number): number => Math.max(size, members) + 1;

const UNHEALTHY_POLICY = 'IfHealthyBudget';

/** The budget itself, at `minAvailable` (budgetMinAvailable). */
export function memberDisruptionBudget(a: ClusterAddress, clusterUid: string, minAvailable: number): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1', kind: 'PodDisruptionBudget',
    metadata: { name: a.cluster, namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)] },
    spec: { minAvailable, unhealthyPodEvictionPolicy: UNHEALTHY_POLICY, selector: { matchLabels: clusterLabels(a.cluster) } },
  };
}

/** The change that brings a budget to these terms (from another minAvailable, or an earlier version's), or undefined if it has them. */
export function budgetChange(b: V1PodDisruptionBudget, minAvailable: number): object | undefined {
  const current = b.spec?.minAvailable === minAvailable && b.spec.maxUnavailable === undefined && b.spec.unhealthyPodEvictionPolicy === UNHEALTHY_POLICY;
  return current ? undefined : { spec: { minAvailable, maxUnavailable: null, unhealthyPodEvictionPolicy: UNHEALTHY_POLICY } };
}

import type { V1PodDisruptionBudget } from '@kubernetes/client-node';
import type { ClusterAddress } from '../etcd/identity.js';
import { clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/**
 * The PodDisruptionBudget over a cluster's members: no member pod may be evicted while every member is ready.
 * A drain does not take members away; the operator moves them: when a member's node is cordoned it adds the
 * member's replacement elsewhere, then removes the member and deletes its pod (a deletion, which the budget
 * does not govern), and the drain then finds the node empty. So a drain never costs the cluster a member,
 * even one of one or two members, and holds back while the replacement cannot be placed. An unready member
 * serves nothing and may be evicted (AlwaysAllow), so that a broken member never blocks a node's drain.
 */
export const BUDGET_TERMS = { maxUnavailable: 0, unhealthyPodEvictionPolicy: 'AlwaysAllow' } as const;

/** The budget itself (its terms above). */
export function memberDisruptionBudget(a: ClusterAddress, clusterUid: string): V1PodDisruptionBudget {
  return {
    apiVersion: 'policy/v1', kind: 'PodDisruptionBudget',
    metadata: { name: a.cluster, namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)] },
    spec: { ...BUDGET_TERMS, selector: { matchLabels: clusterLabels(a.cluster) } },
  };
}

/** Whether a budget has this version's terms (an earlier version set minAvailable instead). */
export const budgetCurrent = (b: V1PodDisruptionBudget): boolean =>
  b.spec?.maxUnavailable === BUDGET_TERMS.maxUnavailable && b.spec.minAvailable === undefined && b.spec.unhealthyPodEvictionPolicy === BUDGET_TERMS.unhealthyPodEvictionPolicy;

import type { V1Node } from '@kubernetes/client-node';

/**
 * Taints that autoscalers put on a node they are about to remove: its pods are to be moved, as for a drain.
 * (`kubectl drain` and node upgrades cordon instead: spec.unschedulable.)
 */
const REMOVAL_TAINTS = ['ToBeDeletedByClusterAutoscaler', 'karpenter.sh/disrupted'];

/** The well-known label of a node's zone. */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** What the planner needs of the node a member pod runs on. */
export interface NodeState {
  /** The node's kubelet has stopped reporting (Ready is False or Unknown): the node is dead, or cut off. */
  lost: boolean;
  /** The node is cordoned or marked for removal: its members should move elsewhere before it goes. */
  draining: boolean;
}

/**
 * A node the cache has never heard of is neither lost nor draining: an empty or lagging node cache must never
 * look like every node gone (the pod garbage collector deals with pods of deleted nodes).
 */
export function nodeState(node: V1Node | undefined): NodeState {
  if (!node) return { lost: false, draining: false };
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  return {
    lost: ready !== undefined && ready.status !== 'True',
    draining: node.spec?.unschedulable === true || (node.spec?.taints ?? []).some((t) => REMOVAL_TAINTS.includes(t.key)),
  };
}

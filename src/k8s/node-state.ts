import type { V1Node } from '@kubernetes/client-node';

/**
 * Taints that autoscalers put on a node they are about to remove: its pods are to be moved, as for a drain.
 * (`kubectl drain` and node upgrades cordon instead: spec.unschedulable.)
 */
const REMOVAL_TAINTS = ['ToBeDeletedByClusterAutoscaler', 'karpenter.sh/disrupted'];

/**
 * Kubernetes' mark that a person confirmed a node is shut down for good or for long (non-graceful node shutdown):
 * its pods are deleted and its volumes detached without waiting for its kubelet.
 */
export const OUT_OF_SERVICE_TAINT = 'node.kubernetes.io/out-of-service';

/** The well-known label of a node's zone. */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

/** What the planner needs of the node a member pod runs on. */
export interface NodeState {
  /** The node's kubelet has stopped reporting (Ready is False or Unknown): the node is dead, or cut off. */
  lost: boolean;
  /** The node is cordoned or marked for removal: its members should move elsewhere before it goes. */
  draining: boolean;
  /** A person declared the node shut down (OUT_OF_SERVICE_TAINT): what only it holds (a local volume) is gone. */
  shutDown: boolean;
}

/**
 * A node the cache has never heard of is neither lost nor draining: an empty or lagging node cache must never
 * look like every node gone (the pod garbage collector deals with pods of deleted nodes).
 */
export function nodeState(node: V1Node | undefined): NodeState {
  if (!node) return { lost: false, draining: false, shutDown: false };
  const ready = node.status?.conditions?.find((c) => c.type === 'Ready');
  const lost = ready !== undefined && ready.status !== 'True';
  const taints = node.spec?.taints ?? [];
  return {
    lost,
    draining: node.spec?.unschedulable === true || taints.some((t) => REMOVAL_TAINTS.includes(t.key)),
    // The taint on a node that answers is a mistake or a leftover: a kubelet that reports still holds its volumes.
    shutDown: lost && taints.some((t) => t.key === OUT_OF_SERVICE_TAINT),
  };
}

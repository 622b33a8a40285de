import { GROUP } from '../api/etcd-cluster.js';

export interface PolicyRule {
  apiGroups: string[];
  resources: string[];
  resourceNames?: string[];
  verbs: string[];
}

/**
 * Exactly what the controllers call, resource by resource (a lab test runs every end-to-end suite with these
 * rights alone, so a missing verb fails it). No `*`, no `get` where only the watch cache is read, nothing
 * cluster-scoped (nodes, read-only, are apart: NODE_RULES).
 */
export const OPERATOR_RULES: PolicyRule[] = [
  // Member pods and one-off snapshot pods; reads come from the watch cache. A change of spec.pod labels or
  // annotations is patched onto the running member pods' metadata, restarting none (pod-metadata.ts).
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch', 'create', 'patch', 'delete'] },
  // A member pod's voter gate is opened once its member is a voter (member-pod.ts, VOTER_GATE).
  { apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] },
  // Claims are brought to the retention policy (owner reference or none) and adopted by a cluster of their name.
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
  // The peer Service of a cluster taken over from the CoreOS operator is patched to publish unready addresses; a metrics
  // Service holding a newer cluster's peer Service name (`<other>-metrics`) is deleted for it.
  { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch', 'create', 'patch', 'delete'] },
  // Whether the CoreOS operator still runs, before one of its clusters is taken over: its leader lock, by name.
  { apiGroups: [''], resources: ['endpoints'], resourceNames: ['etcd-operator'], verbs: ['get'] },
  // Auto-TLS Secrets are made and renewed; static TLS and S3 credentials Secrets are read by name. Never listed or
  // watched: RBAC cannot narrow a list to the names the resources give, so a list right would read them all.
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'update'] },
  // New events are created; repeats patch the count of the one before.
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['list', 'watch', 'create', 'patch'] },
  // An EtcdRestore creates the EtcdCluster it restores; status writes re-read the object after a conflict.
  { apiGroups: [GROUP], resources: ['etcdclusters'], verbs: ['get', 'list', 'watch', 'create'] },
  { apiGroups: [GROUP], resources: ['etcdbackups'], verbs: ['get', 'list', 'watch'] },
  // A backup's verification restores it into a disposable cluster, owned by that restore, and deletes the restore after.
  { apiGroups: [GROUP], resources: ['etcdrestores'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [GROUP], resources: ['etcdclusters/status', 'etcdbackups/status', 'etcdrestores/status'], verbs: ['update'] },
];

/** Leader election, in the operator's own namespace only. */
export const LEASE_RULES: PolicyRule[] = [
  { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
];

/**
 * Nodes and volumes, read-only and cluster-scoped in every install mode: whether a member's node is lost (NotReady),
 * being drained, or declared shut down. `get` is the fresh read that confirms a node's state before a member on it is removed.
 */
export const NODE_RULES: PolicyRule[] = [
  { apiGroups: [''], resources: ['nodes'], verbs: ['get', 'list', 'watch'] },
  // Read by name, and only while a node is declared shut down: whether a member's volume is on that node alone.
  { apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get'] },
];

/** The `app` label of everything the operator makes (CoreOS's names, kept for compatibility). */
export const APP = 'etcd';

/** Labels the operator puts on everything it makes for a cluster. */
export const CLUSTER_LABEL = 'etcd_cluster';
export const clusterLabels = (cluster: string): Record<string, string> => ({ app: APP, [CLUSTER_LABEL]: cluster });

export const labelSelector = (labels: Record<string, string>): string =>
  Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');

/** The label the CoreOS etcd-operator put on each member pod it made (the member's name); this operator's pods have none. */
export const COREOS_MEMBER_LABEL = 'etcd_node';

export const ANNOTATION_INITIAL_CLUSTER = 'etcd.database.coreos.com/initial-cluster';
export const ANNOTATION_VERSION = 'etcd.version';

/** On an EtcdCluster made by an EtcdRestore: that restore's name. Its first members start from the snapshot. */
export const ANNOTATION_RESTORED_BY = 'etcd.database.coreos.com/restored-by';
/** The UID of that EtcdRestore: a later restore of the same name did not make the cluster. */
export const ANNOTATION_RESTORED_BY_UID = 'etcd.database.coreos.com/restored-by-uid';
/** On an EtcdRestore a backup's verification makes: its cluster is disposable, deleted with the restore. */
export const ANNOTATION_VERIFIES = 'etcd.database.coreos.com/verifies';
/** The digest of the settings a member pod was made with: a change rolls the members. */
export const ANNOTATION_CONFIG = 'etcd.database.coreos.com/config';

/**
 * The digest of the fields spec.pod gives a member pod that take a new pod to change (pod-template.ts): a change
 * rolls the members. Pods of earlier versions have none (see template-on-pod.ts).
 */
export const ANNOTATION_POD_TEMPLATE = 'etcd.database.coreos.com/pod-template';
/**
 * The keys of spec.pod.labels and spec.pod.annotations a member pod was given, comma-separated (absent: none):
 * a key gone from the spec is removed from the pods, and no key of anyone else's.
 */
export const ANNOTATION_USER_LABELS = 'etcd.database.coreos.com/user-labels';
export const ANNOTATION_USER_ANNOTATIONS = 'etcd.database.coreos.com/user-annotations';
/** The operator's annotations on what it makes are under this prefix (and ANNOTATION_VERSION, CoreOS's). */
export const OPERATOR_ANNOTATION_PREFIX = 'etcd.database.coreos.com/';

/** The EtcdCluster generation a member pod was made from: one that never ran is made again from a newer spec. */
export const ANNOTATION_SPEC_GENERATION = 'etcd.database.coreos.com/spec-generation';

/** On a member pod started with --force-new-cluster, which must be restarted without it. */
export const ANNOTATION_FORCED = 'etcd.database.coreos.com/force-new-cluster';

/**
 * On a member claim: the UID of the EtcdCluster whose member's data it holds. Claims outlive a deleted
 * EtcdCluster (retention policy Retain): a claim of another UID is one a re-created cluster of the name adopts.
 */
export const ANNOTATION_CLUSTER_UID = 'etcd.database.coreos.com/cluster-uid';
/** On an adopted claim: the UID of the deleted EtcdCluster it came from, until the adoption is recorded in status. */
export const ANNOTATION_ADOPTED_FROM = 'etcd.database.coreos.com/adopted-from';
/** On the claim of a member removed from etcd's member list: when. Its data is not restarted by an adoption. */
export const ANNOTATION_MEMBER_REMOVED = 'etcd.database.coreos.com/member-removed';
/**
 * On a member claim: whether its member was ever seen running on it. Made "false" with the claim, set "true" on
 * the first pass that sees the member's etcd container run. A claim that says "false" holds no data: it is
 * reused or deleted. Claims of operator versions before this mark say nothing and are taken to hold data.
 */
export const ANNOTATION_MEMBER_STARTED = 'etcd.database.coreos.com/member-started';

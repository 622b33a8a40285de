/** The `app` label of everything the operator makes (CoreOS's names, kept for compatibility). */
export const APP = 'etcd';

/** Labels the operator puts on everything it makes for a cluster. */
export const clusterLabels = (cluster: string): Record<string, string> => ({ app: APP, etcd_cluster: cluster });

export const labelSelector = (labels: Record<string, string>): string =>
  Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');

export const ANNOTATION_INITIAL_CLUSTER = 'etcd.database.coreos.com/initial-cluster';
export const ANNOTATION_VERSION = 'etcd.version';

/** On an EtcdCluster made by an EtcdRestore: that restore's name. Its first members start from the snapshot. */
export const ANNOTATION_RESTORED_BY = 'etcd.database.coreos.com/restored-by';
/** The digest of the settings a member pod was made with: a change rolls the members. */
export const ANNOTATION_CONFIG = 'etcd.database.coreos.com/config';

/** On a member pod started with --force-new-cluster, which must be restarted without it. */
export const ANNOTATION_FORCED = 'etcd.database.coreos.com/force-new-cluster';

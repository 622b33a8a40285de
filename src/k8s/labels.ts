/** Labels the operator puts on everything it makes for a cluster (CoreOS's names, kept for compatibility). */
export const clusterLabels = (cluster: string): Record<string, string> => ({ app: 'etcd', etcd_cluster: cluster });

export const labelSelector = (labels: Record<string, string>): string =>
  Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');

export const ANNOTATION_INITIAL_CLUSTER = 'etcd.database.coreos.com/initial-cluster';
export const ANNOTATION_VERSION = 'etcd.version';

import type {
  V1Affinity, V1EnvVarSource, V1PersistentVolumeClaimSpec, V1PodSecurityContext, V1Toleration,
} from '@kubernetes/client-node';
import { array, boolean, embedded, embeddedWith, integer, mapOf, object, oneOf, quantity, string, stringMap } from './schema.js';
import type { Infer } from './schema.js';

export const GROUP = 'etcd.database.coreos.com';
export const VERSION = 'v1beta2';
/** An EtcdCluster's path on the API server. */
export const clusterPath = (namespace: string, name: string): string => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters/${name}`;
export const DEFAULT_REPOSITORY = 'quay.io/coreos/etcd';
export const DEFAULT_ETCD_VERSION = '3.5.35';
/** Semantic version; a leading "v" is tolerated, as the CoreOS operator did. */
export const SEMVER_PATTERN = '^v?(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)\\.(0|[1-9][0-9]*)(-[0-9A-Za-z.-]+)?(\\+[0-9A-Za-z.-]+)?$';

/**
 * What an etcdEnv entry may not set. etcd reads ETCD_<FLAG> for every flag not given on its command line, so
 * an entry can set what the operator leaves out of a member's command line on purpose. Refused: every flag the
 * operator sets on every member or from spec.TLS (test/unit/member-pod.test.ts checks each flag a member pod
 * can get against this list), and every setting that changes a member's identity, its cluster's membership, or
 * whether it keeps acknowledged writes. `ETCD_FORCE_NEW_CLUSTER` on one recreated member made it a cluster of
 * its own. Settings the spec names but CoreOS did not (quota, auto-compaction) stay open, as CoreOS manifests
 * set them here; a spec value, when given, goes on the command line and wins.
 */
export const RESERVED_ETCD_ENV = [
  // Identity and addresses.
  'ETCD_NAME', 'ETCD_DATA_DIR', 'ETCD_WAL_DIR', 'ETCD_INITIAL_CLUSTER', 'ETCD_INITIAL_CLUSTER_STATE', 'ETCD_INITIAL_CLUSTER_TOKEN',
  'ETCD_INITIAL_ADVERTISE_PEER_URLS', 'ETCD_ADVERTISE_CLIENT_URLS', 'ETCD_LISTEN_PEER_URLS', 'ETCD_LISTEN_CLIENT_URLS',
  'ETCD_LISTEN_CLIENT_HTTP_URLS', 'ETCD_LISTEN_METRICS_URLS',
  // Membership.
  'ETCD_FORCE_NEW_CLUSTER', 'ETCD_STRICT_RECONFIG_CHECK', 'ETCD_DISCOVERY', 'ETCD_DISCOVERY_SRV', 'ETCD_DISCOVERY_SRV_NAME',
  'ETCD_DISCOVERY_FALLBACK', 'ETCD_DISCOVERY_PROXY', 'ETCD_DISCOVERY_TOKEN', 'ETCD_DISCOVERY_ENDPOINTS',
  // Durability of acknowledged writes.
  'ETCD_UNSAFE_NO_FSYNC',
  // TLS, which spec.TLS owns.
  'ETCD_PEER_CLIENT_CERT_AUTH', 'ETCD_PEER_TRUSTED_CA_FILE', 'ETCD_PEER_CERT_FILE', 'ETCD_PEER_KEY_FILE', 'ETCD_PEER_AUTO_TLS',
  'ETCD_CLIENT_CERT_AUTH', 'ETCD_TRUSTED_CA_FILE', 'ETCD_CERT_FILE', 'ETCD_KEY_FILE', 'ETCD_AUTO_TLS',
  // Corruption checks, which the operator turns on under each version's names.
  'ETCD_EXPERIMENTAL_INITIAL_CORRUPT_CHECK', 'ETCD_EXPERIMENTAL_COMPACT_HASH_CHECK_ENABLED', 'ETCD_EXPERIMENTAL_CORRUPT_CHECK_TIME',
  'ETCD_FEATURE_GATES', 'ETCD_CORRUPT_CHECK_TIME',
] as const;

const secretName = (description: string) => string({ description, maxLength: 253, pattern: '^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$' });

export const tlsPolicy = object({
  static: object({
    member: object({
      peerSecret: secretName('Secret with the peer certificate (peer.crt, peer.key, peer-ca.crt).'),
      serverSecret: secretName('Secret with the client-facing server certificate (server.crt, server.key, server-ca.crt).'),
    }, { required: ['peerSecret', 'serverSecret'] }),
    operatorSecret: secretName('Secret with the client certificate the operator uses (etcd-client.crt, etcd-client.key, etcd-client-ca.crt).'),
  }, { required: ['member', 'operatorSecret'], description: 'Certificates provided by the user, as in the CoreOS operator.' }),
  auto: boolean({ description: 'The operator creates a CA and the certificates, and renews them before they expire.' }),
}, {
  description: 'TLS for peer and client traffic.',
  'x-kubernetes-validations': [{ rule: '!(has(self.static) && has(self.auto) && self.auto)', message: 'choose either TLS.static or TLS.auto, not both' }],
});

/**
 * Label keys and values as Kubernetes validates them on a pod: checked at admission, so that a bad one is refused
 * naming the field instead of failing every pod the operator makes.
 */
const LABEL_VALUE = { maxLength: 63, pattern: '^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$' };
const LABEL_KEYS = {
  rule: "self.all(k, size(k) <= 317 && k.matches('^([a-z0-9]([-a-z0-9]*[a-z0-9])?([.][a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$'))",
  message: 'a label key is an optional DNS prefix and "/", then at most 63 letters, digits, "-", "_" or ".", starting and ending alphanumeric',
};

/**
 * The names the operator derives from a cluster's: member pods NAME-xxxxxxxx, whose names are their hostnames
 * (DNS labels, at most 63), and the Services NAME and NAME-client (DNS-1035 labels: a letter first, no ".").
 */
export const CLUSTER_NAME = {
  maxLength: 54,
  pattern: '^[a-z]([-a-z0-9]*[a-z0-9])?$',
  message: 'an EtcdCluster name is at most 54 characters: a lowercase letter, then letters, digits or "-", no "."; its member pods are named NAME-xxxxxxxx (hostnames, at most 63) and its Services NAME and NAME-client',
};

/** Kubernetes refuses an object whose annotations pass 256 KiB in all; member pods carry some of the operator's too. */
const ANNOTATION_BYTES = 256 * 1024 - 4096;

/** A claim's storage request: a quantity, with a rule of its own beside the quantity's (see persistentVolumeClaimSpec). */
const storageQuantity = quantity().openapi;

export const podPolicy = object({
  labels: stringMap({
    description: 'Labels for the member pods. "app" and "etcd_*" are reserved for the operator.',
    maxProperties: 64,
    values: LABEL_VALUE,
    'x-kubernetes-validations': [{
      rule: "!('app' in self) && self.all(k, !k.startsWith('etcd_'))",
      message: 'labels "app" and "etcd_*" are reserved for the operator',
    }, LABEL_KEYS],
  }),
  annotations: stringMap({
    description: 'Annotations for the member pods.', maxProperties: 64, values: { maxLength: 65536 },
    'x-kubernetes-validations': [LABEL_KEYS, {
      rule: `self.map(k, size(k) + size(self[k])).sum() <= ${ANNOTATION_BYTES}`,
      message: `annotations may hold at most ${ANNOTATION_BYTES} bytes in all (keys and values): Kubernetes refuses a pod with more than 256 KiB, and the operator adds its own`,
    }],
  }),
  nodeSelector: stringMap({ description: 'Node labels a member pod requires.', maxProperties: 64, values: LABEL_VALUE, 'x-kubernetes-validations': [LABEL_KEYS] }),
  affinity: embedded<V1Affinity>('Scheduling constraints of the member pods (core/v1 Affinity).'),
  antiAffinity: boolean({ description: 'Deprecated (CoreOS): keep members on different nodes; use affinity instead.' }),
  spread: oneOf(['Preferred', 'Required'], {
    description: 'Members spread over zones (topology.kubernetes.io/zone), then nodes, at most one apart. Preferred (the default): as far as '
      + 'the scheduler can, so a cluster larger than the topology still schedules. Required: a member that would break the spread is not '
      + 'placed (nodes without the zone label take none). Not applied when affinity is given: that is the placement.',
    default: 'Preferred',
  }),
  resources: object({
    limits: mapOf(quantity(), { maxProperties: 16, description: 'Most of each resource the container may use.' }),
    requests: mapOf(quantity(), { maxProperties: 16, description: 'What the scheduler reserves for the container.' }),
  }, {
    description: 'Resources of the etcd container (limits and requests of core/v1 ResourceRequirements).',
    'x-kubernetes-validations': [{
      // Quantities that do not parse are refused by their own rule; this one only compares ones that do.
      rule: '!has(self.limits) || !has(self.requests) || self.requests.all(k, !(k in self.limits)'
        + ' || !isQuantity(string(self.requests[k])) || !isQuantity(string(self.limits[k]))'
        + ' || quantity(string(self.requests[k])).compareTo(quantity(string(self.limits[k]))) <= 0)',
      message: 'a request may not exceed its limit (requests.cpu at most limits.cpu, requests.memory at most limits.memory)',
    }],
  }),
  tolerations: array(embedded<V1Toleration>('A core/v1 Toleration.'), { maxItems: 64 }),
  etcdEnv: array(object({
    name: string({ maxLength: 253 }),
    value: string({ maxLength: 4096 }),
    valueFrom: embedded<V1EnvVarSource>('A core/v1 EnvVarSource.'),
  }, {
    required: ['name'],
    // On each entry rather than the list: a message naming the variable costs too much to compute over the list.
    'x-kubernetes-validations': [{
      rule: `!(self.name in [${RESERVED_ETCD_ENV.map((n) => `'${n}'`).join(', ')}])`,
      message: `etcdEnv may not set what the operator owns: ${RESERVED_ETCD_ENV.join(', ')}`,
      messageExpression: `'may not set ' + self.name + ': the operator sets it, or it changes the identity, the membership or the durability of a member'`,
    }],
  }), {
    description: 'Environment of the etcd container, for etcd settings the spec does not name.',
    maxItems: 64,
  }),
  persistentVolumeClaimSpec: embeddedWith<V1PersistentVolumeClaimSpec>(
    'With it, each member keeps its data on its own PVC; without, on an emptyDir. A larger storage request grows every member\'s claim where its StorageClass allows expansion.',
    { resources: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { requests: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: {
      storage: storageQuantity,
    } } } } },
  ),
  securityContext: embedded<V1PodSecurityContext>('Security context of the member pods (core/v1 PodSecurityContext).'),
  priorityClassName: string({ maxLength: 253 }),
  busyboxImage: string({ description: 'Accepted for CoreOS compatibility, not used: no init container waits for DNS here, so no busybox image is pulled. Set, it is named in the UnusedFields condition.', maxLength: 512 }),
  DNSTimeoutInSecond: integer({ description: 'Accepted for CoreOS compatibility, not used: no init container waits for DNS here. Set, it is named in the UnusedFields condition.', minimum: 0, maximum: 3600 }),
  ClusterDomain: string({ description: 'The cluster DNS domain, when it is not cluster.local.', maxLength: 253 }),
}, {
  description: 'How member pods are made. A change reaches running members: labels and annotations are patched onto their pods, restarting '
    + 'nothing; a change of what else goes into the pod rolls them one at a time, as a version change does. persistentVolumeClaimSpec is for '
    + 'the claims of members made afterwards.',
});

export const autoCompaction = object({
  mode: oneOf(['periodic', 'revision'], { description: 'periodic: keep history for a duration; revision: keep a number of revisions.' }),
  retention: string({ description: 'A duration such as "1h" or "30m" (periodic; hours when unitless), or a revision count (revision).', pattern: '^[0-9]+(h|m|s)?$', maxLength: 16 }),
}, {
  required: ['mode', 'retention'],
  description: "etcd's automatic compaction of the key history (--auto-compaction-mode and --auto-compaction-retention).",
  'x-kubernetes-validations': [{ rule: "self.mode != 'revision' || self.retention.matches('^[0-9]+$')", message: 'revision retention is a number of revisions, without a unit' }],
});

export const defragmentation = object({
  unusedPercent: integer({ description: 'Defragment a member when this share of its database file is unused.', minimum: 1, maximum: 99 }),
  minDbSizeBytes: integer({ description: 'Leave members with a database smaller than this alone.', minimum: 0, default: 0, format: 'int64' }),
}, { required: ['unusedPercent'], description: 'Automatic defragmentation, one member at a time and the leader last. Off unless set.' });

export const clusterSpec = object({
  size: integer({ description: 'Number of members, one to nine.', minimum: 1, maximum: 9 }),
  repository: string({ description: 'Image repository with etcd release tags.', default: DEFAULT_REPOSITORY, maxLength: 512 }),
  version: string({
    description: 'etcd version (semver, a leading "v" tolerated), 3.5.0 or later.', default: DEFAULT_ETCD_VERSION, pattern: SEMVER_PATTERN, maxLength: 64,
    'x-kubernetes-validations': [{
      // etcd's own rule (see versions.ts): one minor at a time, up or down, never another major. Status judges what
      // runs (an earlier change may not be rolled out yet); this refuses at once the change etcd can never make.
      // A value that is no version at all is the pattern's to refuse: not read here, where int() would fail with
      // an internal-looking error beside the pattern's.
      rule: "!self.matches('^v?[0-9]+[.][0-9]+[.]') || !oldSelf.matches('^v?[0-9]+[.][0-9]+[.]')"
        + " || (int(self.split('.')[0].replace('v', '')) == int(oldSelf.split('.')[0].replace('v', ''))"
        + " && int(self.split('.')[1]) - int(oldSelf.split('.')[1]) <= 1 && int(oldSelf.split('.')[1]) - int(self.split('.')[1]) <= 1)",
      message: 'etcd changes version one minor at a time, up or down, and never its major version',
      messageExpression: "'etcd cannot go from ' + oldSelf + ' to ' + self + ': it changes one minor version at a time, up or down, and never its major version; set an intermediate version first'",
    }, {
      rule: "!self.matches('^v?[0-2][.]') && !self.matches('^v?3[.][0-4][.]')",
      message: 'etcd before 3.5.0 is not supported',
      messageExpression: `'etcd ' + self + ' is not supported: the oldest version the operator runs is 3.5.0 (it relies on learners, etcdutl and the corruption checks of 3.5); use ${DEFAULT_ETCD_VERSION}, and see the README on moving a CoreOS cluster of an older version'`,
    }],
  }),
  paused: boolean({ description: 'Stop every action on this cluster until unset.' }),
  pod: podPolicy,
  TLS: tlsPolicy,
  quotaBackendBytes: integer({ description: "etcd's database size quota (--quota-backend-bytes); past it etcd raises NOSPACE. etcd's default (2 GiB) when unset.", minimum: 1048576, maximum: 107374182400, format: 'int64' }),
  autoCompaction,
  defragmentation,
  persistentVolumeClaimRetentionPolicy: object({
    whenDeleted: oneOf(['Retain', 'Delete'], {
      description: 'Retain (the default): when the EtcdCluster, or its CRD, is deleted, the member claims and their data stay, and an EtcdCluster '
        + 'of the same name created later re-forms the cluster on them. Delete: they are deleted with it.',
      default: 'Retain',
    }),
  }, { description: "What becomes of the members' claims, as a StatefulSet's policy says. A member removed from the cluster has its claim deleted after a grace period (--keep-removed-claims) whatever this says." }),
  restorePolicy: object({
    fromLatestBackup: string({ description: 'An EtcdBackup in this namespace: when a majority of members is lost with its data, the cluster is rebuilt from its newest good snapshot (writes after it are lost).', maxLength: 253 }),
    fromSurvivor: string({
      description: 'With volumes: when a majority is lost for good, restart a surviving member alone (--force-new-cluster) and scale back out. "auto" takes the survivor with the highest raft index; or name a member. Tried before fromLatestBackup.',
      maxLength: 253, pattern: '^(auto|[a-z0-9]([-a-z0-9]*[a-z0-9])?)$',
    }),
    maxBackupAgeSeconds: integer({
      description: 'fromLatestBackup rebuilds only from a snapshot at most this old (default 86400: a day); with an older one the loss is reported and nothing is deleted.',
      minimum: 60, format: 'int64',
    }),
  }, { description: 'Recovery from a lost majority. Off unless set: without it a lost majority is reported and nothing is deleted.' }),
}, {
  required: ['size'],
  'x-kubernetes-validations': [{
    // Peer URLs change scheme with TLS: a running cluster cannot switch, nor move between user and operator CAs.
    rule: 'has(self.TLS) == has(oldSelf.TLS) && (!has(self.TLS) || (has(self.TLS.static) == has(oldSelf.TLS.static)'
      + ' && (has(self.TLS.auto) && self.TLS.auto) == (has(oldSelf.TLS.auto) && oldSelf.TLS.auto)))',
    message: 'TLS cannot be turned on or off, or switched between static and auto, on an existing cluster',
  }, {
    // A member restarted (a roll, a repair) gets the pod the spec gives: on an emptyDir after the claim spec was
    // removed, it would rejoin under its identity without its data; a member on an emptyDir has no claim to go to.
    rule: '(has(self.pod) && has(self.pod.persistentVolumeClaimSpec)) == (has(oldSelf.pod) && has(oldSelf.pod.persistentVolumeClaimSpec))',
    message: 'pod.persistentVolumeClaimSpec cannot be added or removed on an existing cluster: a member restarted on the other kind of volume would come back without its data; '
      + 'restore a backup into a new cluster instead',
  }, {
    // A survivor is restarted alone on its data: an emptyDir goes with the pod, so there would be nothing to restart on.
    rule: '!has(self.restorePolicy) || !has(self.restorePolicy.fromSurvivor) || (has(self.pod) && has(self.pod.persistentVolumeClaimSpec))',
    message: 'restorePolicy.fromSurvivor needs members on volumes (pod.persistentVolumeClaimSpec): a survivor restarted alone without one comes back empty',
  }],
});

export const condition = object({
  type: string({ maxLength: 64 }),
  status: oneOf(['True', 'False', 'Unknown']),
  reason: string({ maxLength: 256 }),
  message: string({ maxLength: 32768 }),
  lastTransitionTime: string({ format: 'date-time' }),
  observedGeneration: integer({ format: 'int64' }),
}, { required: ['type', 'status'] });

export const clusterStatus = object({
  phase: string({ description: 'Creating, TakingOver (a cluster the CoreOS etcd-operator made, not this operator\'s yet), Running, Scaling, Upgrading (members rolling onto a new version, settings or pod template), Recovering, Paused or Failed.' }),
  reason: string(),
  controlPaused: boolean({ description: 'CoreOS field: the operator is not acting on this cluster.' }),
  observedGeneration: integer({ format: 'int64' }),
  bootstrapped: boolean({ description: 'Every initial member has started once; members are only ever added from now on.' }),
  size: integer({ description: 'Members in the etcd member list.' }),
  readyMembers: integer(),
  selector: string({ description: 'Label selector of the member pods (for the scale subresource).' }),
  members: object({ ready: array(string()), unready: array(string()) }),
  membership: array(string(), {
    description: "etcd's member list as last seen, kept while no member answers: the members restarted on their claims when every pod is gone.",
  }),
  leader: string(),
  currentVersion: string(),
  targetVersion: string(),
  serviceName: string(),
  clientPort: integer(),
  conditions: array(condition),
  memberStatus: array(object({
    name: string(), id: string(), version: string(), isLeader: boolean(), isLearner: boolean(),
    raftIndex: integer({ format: 'int64' }), raftTerm: integer({ format: 'int64' }), revision: integer({ format: 'int64' }),
    dbSize: integer({ format: 'int64' }), dbSizeInUse: integer({ format: 'int64' }),
  }, { required: ['name'] }), { description: 'What each member that answered reports of itself.' }),
  alarms: array(object({ member: string(), alarm: string() }), { description: 'Active etcd alarms.' }),
  claimedStorage: string({
    description: 'The largest capacity a member\'s claim holds. Kubernetes never shrinks a volume, so the spec\'s request cannot go below '
      + 'it; a request raised in vain (a growth the StorageClass refused, or that failed) can be taken back.',
  }),
  rebuild: object({
    backup: string(), path: string(), revision: integer({ format: 'int64' }),
    lostRevisions: integer({ description: 'Revisions the lost cluster had reached past the snapshot: writes lost.', format: 'int64' }),
    startedAt: string({ format: 'date-time' }), completedAt: string({ format: 'date-time' }), cleared: boolean(),
  }, { description: 'The last rebuild from backup after a lost majority.' }),
  survivorRecovery: object({
    survivor: string(), revision: integer({ format: 'int64' }), startedAt: string({ format: 'date-time' }),
    forced: boolean({ description: 'The survivor ran alone with --force-new-cluster.' }), completedAt: string({ format: 'date-time' }),
  }, { description: 'The last recovery from a survivor after a lost majority.' }),
  takenOver: object({
    from: string({ description: 'The operator that made the cluster: coreos-etcd-operator.' }),
    at: string({ format: 'date-time' }),
    members: array(string(), { description: 'Its members when taken over, in place.' }),
  }, { description: 'A cluster another operator made, taken over in place: nothing was restarted.' }),
  noSpaceRecovery: object({
    compactedRevision: integer({ format: 'int64' }),
    defragmented: array(string()),
  }, { description: 'Progress of the recovery from a NOSPACE alarm, so that a restarted operator redoes no step.' }),
  noSpaceDisarmedAt: string({ format: 'date-time', description: 'When the operator last disarmed NOSPACE: the next recovery waits a minute from it.' }),
});

/** spec.pod.persistentVolumeClaimSpec.resources.requests.storage under `root`: the field, each level of it set, and its quantity. */
const STORAGE_PATH = ['spec', 'pod', 'persistentVolumeClaimSpec', 'resources', 'requests', 'storage'];
const storageRequest = (root: string): { field: string; set: string; quantity: string } => {
  const field = [root, ...STORAGE_PATH].join('.');
  return {
    field,
    set: STORAGE_PATH.map((_, i) => `has(${[root, ...STORAGE_PATH.slice(0, i + 1)].join('.')})`).join(' && '),
    quantity: `quantity(string(${field}))`,
  };
};
const now = storageRequest('self');
const before = storageRequest('oldSelf');

/**
 * Kubernetes grows a volume but never shrinks one, so the storage request may go down only as far as the members'
 * claims still are (status.claimedStorage): a raise the StorageClass refused can be taken back. On the whole object,
 * the only place a rule reads status beside spec. (A value that is not a quantity is refused by its own rule.)
 */
export const STORAGE_SHRINK_RULE = {
  rule: `!(${now.set} && ${before.set}) || !isQuantity(string(${now.field})) || !isQuantity(string(${before.field})) `
    + `|| ${now.quantity}.compareTo(${before.quantity}) >= 0 `
    + `|| (has(self.status) && has(self.status.claimedStorage) && isQuantity(self.status.claimedStorage) && ${now.quantity}.compareTo(quantity(self.status.claimedStorage)) >= 0)`,
  message: 'the storage request cannot go below what the members\' claims hold (status.claimedStorage): Kubernetes grows volumes, never shrinks them; '
    + 'restore a backup into a new cluster with the smaller request instead',
  messageExpression: "'the storage request cannot go below ' + (has(self.status) && has(self.status.claimedStorage) ? self.status.claimedStorage : "
    + `string(${before.field})) + ', what the members\\' claims hold (status.claimedStorage): Kubernetes grows volumes, never shrinks them; `
    + "restore a backup into a new cluster with the smaller request instead'",
  fieldPath: `.${STORAGE_PATH.join('.')}`,
};

export type ClusterSpec = Infer<typeof clusterSpec>;

/** The etcd version a spec asks for, without the tolerated leading "v" (the API server applies the default). */
export const specVersion = (spec: ClusterSpec): string => (spec.version ?? DEFAULT_ETCD_VERSION).replace(/^v/, '');

/** The image of an etcd version from a spec's repository: release tags carry the "v". */
export const imageOf = (spec: ClusterSpec, version: string): string => `${spec.repository ?? DEFAULT_REPOSITORY}:v${version}`;
export type ClusterStatus = Infer<typeof clusterStatus>;
export type Condition = Infer<typeof condition>;

export interface EtcdCluster {
  apiVersion: `${typeof GROUP}/${typeof VERSION}`;
  kind: 'EtcdCluster';
  metadata: {
    name: string; namespace: string; uid?: string; generation?: number; resourceVersion?: string; creationTimestamp?: string; deletionTimestamp?: string;
    labels?: Record<string, string>; annotations?: Record<string, string>; ownerReferences?: { apiVersion: string; kind: string; name: string; uid: string; controller?: boolean }[];
  };
  spec: ClusterSpec;
  status?: ClusterStatus;
}

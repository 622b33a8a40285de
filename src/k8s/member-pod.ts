import { createHash } from 'node:crypto';
import type { V1Container, V1Pod, V1Probe, V1Volume } from '@kubernetes/client-node';
import { CLIENT_PORT, PEER_PORT, clientUrl, peerUrl } from '../etcd/identity.js';
import type { ClusterAddress } from '../etcd/identity.js';
import { imageOf } from '../api/etcd-cluster.js';
import type { ClusterSpec } from '../api/etcd-cluster.js';
import { atLeast, parseVersion } from '../etcd/versions.js';
import { ANNOTATION_CONFIG, ANNOTATION_FORCED, ANNOTATION_INITIAL_CLUSTER, ANNOTATION_POD_TEMPLATE, ANNOTATION_SPEC_GENERATION, ANNOTATION_VERSION, clusterLabels } from './labels.js';
import { MEMBER_TLS_DIR, SECRET_KEYS } from './tls-secrets.js';
import type { TlsSecretNames } from './tls-secrets.js';
import { ownedByCluster } from './owner.js';
import { podTemplate, podTemplateDigest } from './pod-template.js';
import { userKeysRecord, userMetadata } from './pod-metadata.js';
import { KEY_DIR, streamNodeEnv } from './snapshot-pod.js';
import { lockedDownContainer } from './security.js';

export const METRICS_PORT = 8080;
export const DATA_DIR = '/var/etcd/data';
/** The pod volume holding the member's data: its claim, or an emptyDir. */
export const DATA_VOLUME = 'data';

/** A restore: where the snapshot is (the operator's own image fetches it). */
export interface RestoreSource {
  s3?: { path: string; awsSecret: string; endpoint?: string; forcePathStyle?: boolean };
  volume?: { claimName: string; path: string };
  /** The Secret with the keys, when the backup may be encrypted. */
  keySecret?: string;
  /** Raise the restored revision this far and mark it compacted (EtcdRestore.spec.revisionBump); 0 or absent: no. */
  revisionBump?: number;
}


/**
 * The pod condition the operator sets True once the pod's member is a voter. A learner refuses most client
 * requests, yet passes etcd's /health on 3.6 once caught up, and /readyz fails it only from 3.5.19: with this gate
 * its pod is not Ready on any version or probe, so the client Service's EndpointSlice leaves it out until it is
 * promoted (which etcd allows only once it has caught up). Pods made before the gate was added have none, and
 * are Ready on their readiness probe alone, as before.
 */
export const VOTER_GATE = 'etcd.database.coreos.com/voter';

/** Where an earlier operator's restore steps left the snapshot, on the member's volume (the data guard removes it). */
const LEFTOVER_SNAPSHOT = '/var/etcd/restore.db';
/** The scratch volume's mount: on the node's disk, never on the member's claim, whose room is the data's. */
const SCRATCH_MOUNT = '/var/etcd-restore-scratch';
const SCRATCH_VOLUME = 'restore-scratch';
/** The fetched snapshot, or (the steps run again) a link to the member's own database: what etcdutl reads. */
const SNAPSHOT_FILE = `${SCRATCH_MOUNT}/restore.db`;
/**
 * Where etcdutl writes: a link the fetch step points at the data directory for a restore, or at a scratch
 * directory once the restore is complete (the steps run again on a recreated sandbox), which the tidy step
 * empties. etcdutl refuses a directory that is not empty, and the etcd image has no shell to skip it by.
 */
const RESTORE_INTO = `${SCRATCH_MOUNT}/into`;
/** On the member's volume, beside its data: the restore is complete (etcdutl ran through); written by the tidy step. */
const RESTORE_COMPLETE = '/var/etcd/restore-complete';
/** The init container in which etcd's own etcdutl turns the fetched snapshot into the member's data directory. */
export const RESTORE_STEP = 'restore-snapshot';
/** The step that fetches and checks the snapshot. */
export const FETCH_STEP = 'fetch-snapshot';
/**
 * The step that removes what the restore steps used (the snapshot, the link, the scratch). A pod with it runs its
 * restore steps any number of times (see restoreSteps); one with RESTORE_STEP and without it is an earlier
 * operator's, whose steps could run once only.
 */
export const TIDY_STEP = 'tidy-restore';
/** The fetch step's exit code when the backup itself is refused (checksum, seal, etcd's own hash): retrying cannot help. */
export const SNAPSHOT_REFUSED_EXIT = 4;

/**
 * Three init containers: the operator image fetches the snapshot and checks every byte; etcd's own etcdutl turns
 * it into this member's data directory, for the restored cluster's initial membership; the operator image removes
 * the snapshot. They run again whenever the pod's sandbox is made anew (a node reboot), so they must leave data
 * that is there as it is: the fetch step then fetches nothing, gives etcdutl the member's own database and a
 * scratch directory to write into, and the tidy step removes that copy. So the pod that restored the member stays
 * its pod, and a restore ends when its members serve, with no member replaced after it.
 */
function restoreSteps(i: MemberPodInput, r: RestoreSource): { initContainers: V1Container[]; volumes: V1Volume[] } {
  const from = r.s3
    ? ['--s3-path', r.s3.path, '--aws-dir', '/etc/etcd-backup/aws', ...(r.s3.endpoint ? ['--s3-endpoint', r.s3.endpoint] : []), ...(r.s3.forcePathStyle ? ['--force-path-style'] : [])]
    : ['--dir', '/backup', '--name', r.volume?.path ?? ''];
  const source: V1Volume = r.s3
    ? { name: 'backup-source', secret: { secretName: r.s3.awsSecret } }
    : { name: 'backup-source', persistentVolumeClaim: { claimName: r.volume?.claimName ?? '', readOnly: true } };
  const target = ['--to', SNAPSHOT_FILE, '--into', RESTORE_INTO, '--scratch', `${SCRATCH_MOUNT}/copy`, '--complete', RESTORE_COMPLETE];
  const volumes = [{ name: DATA_VOLUME, mountPath: '/var/etcd' }, { name: SCRATCH_VOLUME, mountPath: SCRATCH_MOUNT }];
  // On a claim, the data guard's record that etcd has started on this pod is written by the tidy step, just before
  // etcd starts: a reboot during the restore itself is not a member that lost its data.
  const guard = i.withClaim ? { args: ['--started', GUARD_STARTED], mounts: [GUARD_MOUNT] } : { args: [], mounts: [] };
  return {
    initContainers: [
      {
        name: FETCH_STEP, image: i.operator.image, securityContext: lockedDownContainer, env: [streamNodeEnv()],
        // The operator image's entrypoint is the CLI, wherever an image puts node.
        args: ['snapshot', 'fetch', ...target, '--data-dir', DATA_DIR, ...from, ...(r.keySecret ? ['--key-dir', KEY_DIR] : [])],
        volumeMounts: [
          ...volumes, { name: 'backup-source', mountPath: r.s3 ? '/etc/etcd-backup/aws' : '/backup', readOnly: true },
          ...(r.keySecret ? [{ name: 'backup-keys', mountPath: KEY_DIR, readOnly: true }] : []),
        ],
      },
      {
        name: RESTORE_STEP, image: imageOf(i.spec, i.version), securityContext: lockedDownContainer,
        // --skip-hash-check: the fetch step checked etcd's own hash as the bytes came; the member's own database,
        // given when the steps run again, has none.
        command: ['/usr/local/bin/etcdutl', 'snapshot', 'restore', SNAPSHOT_FILE, '--skip-hash-check', `--name=${i.member}`, `--initial-cluster=${i.initialCluster}`,
          `--initial-cluster-token=${i.token}`, `--initial-advertise-peer-urls=${peerUrl(i.address, i.member)}`, `--data-dir=${RESTORE_INTO}`,
          // Every founder bumps by the same amount, so their stores are alike.
          ...(r.revisionBump ? [`--bump-revision=${r.revisionBump}`, '--mark-compacted'] : [])],
        // etcdutl's own words on why it refused, for the EtcdRestore's condition.
        terminationMessagePolicy: 'FallbackToLogsOnError',
        volumeMounts: volumes,
      },
      {
        name: TIDY_STEP, image: i.operator.image, securityContext: lockedDownContainer,
        args: ['snapshot', 'tidy', ...target, ...guard.args],
        volumeMounts: [...volumes, ...guard.mounts],
      },
    ],
    volumes: [source, { name: SCRATCH_VOLUME, emptyDir: {} }, ...(r.keySecret ? [{ name: 'backup-keys', secret: { secretName: r.keySecret } }] : [])],
  };
}

export interface MemberPodInput {
  address: ClusterAddress;
  clusterUid: string;
  spec: ClusterSpec;
  /** The EtcdCluster's generation the spec is of. */
  specGeneration: number;
  member: string;
  /** The etcd version it runs (without a leading "v"). */
  version: string;
  /** "new" only for the members of a first bootstrap; "existing" for every member added later. */
  state: 'new' | 'existing';
  /** etcd's --initial-cluster: the bootstrap members, or the current members plus this one. */
  initialCluster: string;
  /** Per incarnation of the cluster (its UID): a wiped member can never found a new cluster by mistake. */
  token: string;
  /** Member names of the bootstrap, recorded so that an interrupted bootstrap resumes identically. */
  bootstrapMembers?: string[];
  withClaim: boolean;
  tls?: MemberTls;
  /** For the members of a restored cluster's bootstrap: their data comes from a snapshot. */
  restore?: RestoreSource;
  /** A survivor restarting alone: etcd drops every other member from its data. */
  forceNewCluster?: boolean;
  operator: OperatorPodSettings;
  /** The member has started before (on this volume): an empty data directory means its data is lost. */
  expectData: boolean;
}

/** What the operator, not the cluster's spec, puts into every member pod (set by `etcd-operator run` flags). */
export interface OperatorPodSettings {
  /** The operator's image: it runs the data guard of a member on a volume, and fetches a restore's snapshot. */
  image: string;
  /** How often the leader compares every member's data with its own (etcd's periodic corruption check). */
  corruptCheckSeconds: number;
}

export const DATA_GUARD = 'data-guard';
export const ETCD_CONTAINER = 'etcd';
/** The data guard's exit code that tells the operator the member's data is gone (not a crash of the guard). */
export const DATA_LOST_EXIT = 3;
/** The data guard's exit code when the data directory exists but the pod's user cannot use it (see data-guard). */
export const DATA_NOT_OURS_EXIT = 5;
const GUARD_DIR = '/var/run/etcd-guard';
const GUARD_STARTED = `${GUARD_DIR}/started`;
const GUARD_MOUNT = { name: 'guard', mountPath: GUARD_DIR };

/**
 * The data guard (`etcd-operator data-guard`) runs before etcd, and again whenever the pod's containers are set
 * up anew (a node reboot): it refuses an empty data directory to a member that started before, which the pod
 * knows from `expectData` or from the marker the guard left on the pod's own scratch volume the first time.
 */
function dataGuard(i: MemberPodInput): V1Container {
  return {
    name: DATA_GUARD, image: i.operator.image, securityContext: lockedDownContainer,
    args: [DATA_GUARD, `--data-dir=${DATA_DIR}`, `--marker=${GUARD_STARTED}`, `--leftover=${LEFTOVER_SNAPSHOT}`, ...(i.expectData ? ['--expect-data'] : []),
      // A restoring pod's tidy step writes the marker once the data is there, just before etcd starts.
      ...(i.restore ? ['--marked-later'] : [])],
    terminationMessagePolicy: 'FallbackToLogsOnError',
    volumeMounts: [{ name: DATA_VOLUME, mountPath: '/var/etcd' }, GUARD_MOUNT],
  };
}

/** A TLS cluster's Secrets, and which issuance of the operator-made certificates the members should hold. */
export interface MemberTls {
  secrets: TlsSecretNames;
  /** Changes when the operator renews the certificates (empty for user-made Secrets). */
  generation: string;
}

/** Both listeners require certificates signed by the cluster's CA, from peers and from clients alike. */
function tlsFlags(): string[] {
  const file = (role: 'peer' | 'server', key: 'cert' | 'key' | 'ca'): string => `${MEMBER_TLS_DIR[role]}/${SECRET_KEYS[role][key]}`;
  return [
    '--peer-client-cert-auth=true', `--peer-trusted-ca-file=${file('peer', 'ca')}`, `--peer-cert-file=${file('peer', 'cert')}`, `--peer-key-file=${file('peer', 'key')}`,
    '--client-cert-auth=true', `--trusted-ca-file=${file('server', 'ca')}`, `--cert-file=${file('server', 'cert')}`, `--key-file=${file('server', 'key')}`,
  ];
}

/** etcd flags that follow from the spec's settings; changing them rolls the members. */
export function settingFlags(spec: ClusterSpec, tls?: MemberTls): string[] {
  return [
    ...(spec.quotaBackendBytes ? [`--quota-backend-bytes=${spec.quotaBackendBytes}`] : []),
    ...(spec.autoCompaction ? [`--auto-compaction-mode=${spec.autoCompaction.mode}`, `--auto-compaction-retention=${spec.autoCompaction.retention}`] : []),
    ...(tls ? tlsFlags() : []),
  ];
}

/** The digest recorded on each pod; empty for a spec with no settings, as pods made before settings existed. */
export function configDigest(spec: ClusterSpec, tls?: MemberTls): string {
  const parts = [...settingFlags(spec, tls), ...(tls ? [tls.secrets.peer, tls.secrets.server, tls.generation] : [])];
  return parts.length === 0 ? '' : createHash('sha256').update(parts.join('\n')).digest('hex').slice(0, 16);
}

/**
 * etcd's corruption checks: at start, a member compares its data with the others' before serving; the leader
 * compares hashes after each compaction and every `periodSeconds`. A mismatch raises the CORRUPT alarm. 3.6
 * renamed the flags (the 3.5 names are deprecated there).
 */
export function corruptionCheckFlags(version: string, periodSeconds: number): string[] {
  const v = parseVersion(version);
  if (v && (v.major > 3 || (v.major === 3 && v.minor >= 6))) {
    return ['--feature-gates=InitialCorruptCheck=true,CompactHashCheck=true', `--corrupt-check-time=${periodSeconds}s`];
  }
  return ['--experimental-initial-corrupt-check=true', '--experimental-compact-hash-check-enabled=true', `--experimental-corrupt-check-time=${periodSeconds}s`];
}

/**
 * How long etcd may be busy with one pass over its whole database before it is judged wedged. A
 * defragmentation holds every read of the store until it ends (the operator waits this long for one); a start
 * loads the database, replays the log and hashes the data before the metrics listener opens.
 */
export const WHOLE_DATABASE_PASS_SECONDS = 600;

/** How a probe asks. */
type ProbeHandler = Pick<V1Probe, 'httpGet' | 'tcpSocket'>;

/** What the probes ask etcd: whether its own store answers, and whether it serves clients. */
interface ProbeChecks { storeAnswers: ProbeHandler; serves: ProbeHandler }

/** On the plain metrics listener (--listen-metrics-urls), which serves these under TLS too. */
const metricsGet = (path: string): ProbeHandler => ({ httpGet: { path, port: METRICS_PORT } });

/** A leader, a linearizable read, and no alarm but NOSPACE: a member out of space still serves reads and deletes. */
const HEALTH = metricsGet('/health?exclude=NOSPACE');

/**
 * The checks of each etcd release, newest first; a member gets the first whose release it has reached. Alarms are
 * the cluster's, not the member's, and a restart clears none: the store checks ignore them.
 */
const PROBE_CHECKS: readonly { since: string; checks: ProbeChecks }[] = [
  // /livez: a serializable read of the local store, nothing else. /readyz: that, a linearizable read (a leader
  // and a quorum), no CORRUPT alarm, and from 3.5.19 and 3.6.0 not a learner.
  { since: '3.5.11', checks: { storeAnswers: metricsGet('/livez'), serves: metricsGet('/readyz') } },
  // serializable=true skips /health's leader check and reads locally.
  { since: '3.5.3', checks: { storeAnswers: metricsGet('/health?serializable=true&exclude=NOSPACE&exclude=CORRUPT'), serves: HEALTH } },
];

/**
 * Before 3.5.3 /health ignores serializable and needs a leader: only the metrics listener is asked to accept, which
 * it does once etcd has started (the peer listener opens before the log is replayed).
 */
const OLDEST_CHECKS: ProbeChecks = { storeAnswers: { tcpSocket: { port: METRICS_PORT } }, serves: HEALTH };

const probeChecks = (version: string): ProbeChecks => PROBE_CHECKS.find((c) => atLeast(version, c.since))?.checks ?? OLDEST_CHECKS;

/** Probing every `periodSeconds`, failing only after `seconds` of failures. */
const failingAfter = (seconds: number, periodSeconds: number): Pick<V1Probe, 'periodSeconds' | 'failureThreshold'> =>
  ({ periodSeconds, failureThreshold: Math.ceil(seconds / periodSeconds) });

/**
 * A member's probes. None depends on quorum but readiness: a liveness probe that failed without a leader would
 * restart every member of a partitioned cluster. Started and alive: the local store answers, within the time one
 * pass over the whole database may take (a start's replay, a defragmentation). Ready: etcd serves clients. Outside
 * the settings digest: running members keep the probes they were made with, and new pods get these.
 */
export function memberProbes(version: string): Pick<V1Container, 'startupProbe' | 'readinessProbe' | 'livenessProbe'> {
  const { storeAnswers, serves } = probeChecks(version);
  return {
    // Every second, so that a member that starts at once is soon Ready (readiness waits for it).
    startupProbe: { ...storeAnswers, ...failingAfter(WHOLE_DATABASE_PASS_SECONDS, 1), timeoutSeconds: 5 },
    // Out of the Service after three failures in a row, each a read slower than 5 s or refused: a loaded member is
    // not dropped for one slow answer, and one without a leader is out within about 15 s.
    readinessProbe: { ...serves, periodSeconds: 2, timeoutSeconds: 5, failureThreshold: 3 },
    livenessProbe: { ...storeAnswers, ...failingAfter(WHOLE_DATABASE_PASS_SECONDS, 10), timeoutSeconds: 10 },
  };
}

export function memberPod(i: MemberPodInput): V1Pod {
  const { address, spec, member } = i;
  const template = podTemplate(spec, address.cluster);
  const user = userMetadata(spec);
  const restore = i.restore ? restoreSteps(i, i.restore) : undefined;
  // Only data on a volume outlives the pod; an emptyDir member never restarts on data of its own.
  const initContainers = [...(i.withClaim ? [dataGuard(i)] : []), ...(restore?.initContainers ?? [])];
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: member,
      namespace: address.namespace,
      labels: { ...user.labels, ...clusterLabels(address.cluster) },
      annotations: {
        ...user.annotations,
        ...userKeysRecord(user),
        [ANNOTATION_VERSION]: i.version,
        [ANNOTATION_CONFIG]: configDigest(spec, i.tls),
        [ANNOTATION_POD_TEMPLATE]: podTemplateDigest(spec, address.cluster),
        [ANNOTATION_SPEC_GENERATION]: String(i.specGeneration),
        ...(i.bootstrapMembers ? { [ANNOTATION_INITIAL_CLUSTER]: i.bootstrapMembers.join(',') } : {}),
        ...(i.forceNewCluster ? { [ANNOTATION_FORCED]: 'true' } : {}),
      },
      ownerReferences: [ownedByCluster(address.cluster, i.clusterUid)],
    },
    spec: {
      hostname: member,
      subdomain: address.cluster,
      // Service links would put ETCD_PORT and the like into the environment, which etcd reads as flags.
      enableServiceLinks: false,
      automountServiceAccountToken: false,
      restartPolicy: 'Always',
      ...(initContainers.length > 0 ? { initContainers } : {}),
      containers: [{
        name: ETCD_CONTAINER,
        image: imageOf(spec, i.version),
        command: [
          '/usr/local/bin/etcd',
          `--name=${member}`,
          `--data-dir=${DATA_DIR}`,
          `--listen-peer-urls=${address.tls ? 'https' : 'http'}://0.0.0.0:${PEER_PORT}`,
          `--listen-client-urls=${address.tls ? 'https' : 'http'}://0.0.0.0:${CLIENT_PORT}`,
          `--listen-metrics-urls=http://0.0.0.0:${METRICS_PORT}`,
          `--advertise-client-urls=${clientUrl(address, member)}`,
          `--initial-advertise-peer-urls=${peerUrl(address, member)}`,
          `--initial-cluster=${i.initialCluster}`,
          `--initial-cluster-state=${i.state}`,
          `--initial-cluster-token=${i.token}`,
          ...corruptionCheckFlags(i.version, i.operator.corruptCheckSeconds),
          ...settingFlags(spec, i.tls),
          ...(i.forceNewCluster ? ['--force-new-cluster'] : []),
        ],
        ...template.container,
        // etcd logs why it exits (a full disk, a bad flag) and writes no termination message: the log's tail
        // becomes the message the operator reads (DiskFull). Outside the settings and pod template digests, as
        // every field the operator itself sets: running members keep their pods, and get this as they are next made.
        terminationMessagePolicy: 'FallbackToLogsOnError',
        // The "restricted" standard's (the pod's security context is the template's): etcd writes only its data.
        securityContext: lockedDownContainer,
        ports: [
          { name: 'client', containerPort: CLIENT_PORT },
          { name: 'peer', containerPort: PEER_PORT },
          { name: 'metrics', containerPort: METRICS_PORT },
        ],
        ...memberProbes(i.version),
        volumeMounts: [
          { name: DATA_VOLUME, mountPath: '/var/etcd' },
          ...(i.tls ? [{ name: 'peer-tls', mountPath: MEMBER_TLS_DIR.peer, readOnly: true }, { name: 'server-tls', mountPath: MEMBER_TLS_DIR.server, readOnly: true }] : []),
        ],
      }],
      volumes: [
        ...(i.withClaim ? [{ name: DATA_VOLUME, persistentVolumeClaim: { claimName: member } }, { name: 'guard', emptyDir: {} }] : [{ name: DATA_VOLUME, emptyDir: {} }]),
        ...(i.tls ? [{ name: 'peer-tls', secret: { secretName: i.tls.secrets.peer } }, { name: 'server-tls', secret: { secretName: i.tls.secrets.server } }] : []),
        ...(restore?.volumes ?? []),
      ],
      // Behind the client Service only once the operator has seen the member a voter (see VOTER_GATE).
      readinessGates: [{ conditionType: VOTER_GATE }],
      ...template.pod,
    },
  };
}

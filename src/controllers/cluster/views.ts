import type { V1Node, V1Pod } from '@kubernetes/client-node';
import type { BackupView, ClaimMarks, ClusterState, MemberHealth, MemberView, PodView, RetainedClaim } from '../../etcd/planner.js';
import type { EtcdMember, EtcdStatus } from '../../etcd/client.js';
import type { EtcdView } from './observe.js';
import { memberName } from '../../etcd/client.js';
import { ANNOTATION_CONFIG, ANNOTATION_FORCED, COREOS_MEMBER_LABEL, ANNOTATION_INITIAL_CLUSTER, ANNOTATION_SPEC_GENERATION, ANNOTATION_VERSION } from '../../k8s/labels.js';
import { DATA_GUARD, DATA_LOST_EXIT, ETCD_CONTAINER, FETCH_STEP, RESTORE_STEP, TIDY_STEP, configDigest } from '../../k8s/member-pod.js';
import { memberPodSecurity } from '../../k8s/security.js';
import type { MemberTls, RestoreSource } from '../../k8s/member-pod.js';
import { specVersion } from '../../api/etcd-cluster.js';
import { podTemplateDigest } from '../../k8s/pod-template.js';
import { templateOnPod } from '../../k8s/template-on-pod.js';
import { podMetadataDigest, specMetadataDigest } from '../../k8s/pod-metadata.js';
import { dataNotOurs, etcdNeverRan, podTrouble, unschedulable } from './pod-trouble.js';
import { ZONE_LABEL, nodeState } from '../../k8s/node-state.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';

const conditionTrue = (pod: V1Pod, type: string): boolean => pod.status?.conditions?.some((c) => c.type === type && c.status === 'True') ?? false;

/** Ready: behind the client Service (etcd's health, and the voter gate where the pod has one). */
export const podReady = (pod: V1Pod): boolean => conditionTrue(pod, 'Ready');

/** A pod's change in readiness: it became Ready, or stopped being. */
export const readinessChanged = (old: V1Pod, now: V1Pod): boolean => podReady(old) !== podReady(now);

/**
 * etcd's own readiness probe, whatever the voter gate says: what status counts as ready and the planner waits for
 * before a membership change. A learner fails it where /readyz asks for a voter (3.5.19+, 3.6): the planner
 * promotes a learner on its answers and raft index, never on this, and its gate opens only after that.
 */
export const etcdHealthy = (pod: V1Pod): boolean => conditionTrue(pod, 'ContainersReady');

/** Running with every member ready and no change under way, as its status last said (a cluster an earlier operator restored swaps its members first). */
export const clusterSettled = (cluster: EtcdCluster | undefined): boolean => cluster?.status?.phase === 'Running'
  && (cluster.status.conditions?.some((c) => c.type === 'Degraded' && c.status === 'False') ?? false);

/** Made by the CoreOS etcd-operator: it labels each member pod with the member's name; this operator never does. */
export const madeByCoreOS = (pod: V1Pod): boolean => pod.metadata?.labels?.[COREOS_MEMBER_LABEL] !== undefined;

/** What the planner needs to know of a pod. */
/** The pod's data guard (or a restore's fetch step) refused to start etcd, now or last time: the member's data came back empty. */
function dataLost(pod: V1Pod): boolean {
  // The guard's word, or a restore's fetch step's: the data of a member whose restore was complete is gone.
  const steps = pod.status?.initContainerStatuses?.filter((c) => c.name === DATA_GUARD || c.name === FETCH_STEP) ?? [];
  return steps.some((s) => [s.state?.terminated, s.lastState?.terminated].some((t) => t?.exitCode === DATA_LOST_EXIT));
}

/** The user a pod runs etcd as: its container's, else the pod's, else root (what etcd's images run as). */
function runAsUser(pod: V1Pod): number {
  const etcd = pod.spec?.containers.find((c) => c.name === ETCD_CONTAINER);
  return etcd?.securityContext?.runAsUser ?? pod.spec?.securityContext?.runAsUser ?? 0;
}

/**
 * The pod carries restore steps that can run once only (an earlier operator's: without the tidy step, etcdutl
 * fails for ever on the data it made when a new sandbox runs them again): once the cluster is bootstrapped, it is
 * on settings other than the spec's, and rolls like any such member (restarted on its volume, or replaced), onto
 * a pod without them. Steps with the tidy step run again harmlessly, and their pod stays.
 */
export const carriesOneShotRestore = (pod: V1Pod): boolean => {
  const steps = pod.spec?.initContainers?.map((c) => c.name) ?? [];
  return steps.includes(RESTORE_STEP) && !steps.includes(TIDY_STEP);
};

/** What of a pod is judged against the spec: the pod template it is on, and the labels and annotations it carries. */
type SpecOnPod = Pick<PodView, 'template' | 'templateUnrecorded' | 'metadata'>;

export function podView(pod: V1Pod, node?: V1Node): Omit<PodView, keyof SpecOnPod> {
  const isReady = etcdHealthy(pod);
  const { lost, draining } = nodeState(node);
  const zone = node?.metadata?.labels?.[ZONE_LABEL];
  const bootstrap = pod.metadata?.annotations?.[ANNOTATION_INITIAL_CLUSTER];
  const trouble = podTrouble(pod);
  return {
    name: pod.metadata?.name ?? '',
    phase: (pod.status?.phase ?? 'Pending') as PodView['phase'],
    ready: isReady,
    terminating: pod.metadata?.deletionTimestamp !== undefined,
    version: pod.metadata?.annotations?.[ANNOTATION_VERSION] ?? '',
    config: carriesOneShotRestore(pod) ? `${RESTORE_STEP}:${pod.metadata?.annotations?.[ANNOTATION_CONFIG] ?? ''}` : pod.metadata?.annotations?.[ANNOTATION_CONFIG] ?? '',
    forced: pod.metadata?.annotations?.[ANNOTATION_FORCED] === 'true',
    dataLost: dataLost(pod),
    ...(etcdNeverRan(pod) ? { neverRan: true } : {}),
    ...(unschedulable(pod) ? { unschedulable: true } : {}),
    specGeneration: Number(pod.metadata?.annotations?.[ANNOTATION_SPEC_GENERATION] ?? 0),
    ...(pod.spec?.nodeName ? { node: pod.spec.nodeName } : {}),
    ...(zone ? { zone } : {}),
    ...(lost ? { nodeLost: true } : !draining ? {} : { nodeDraining: true }),
    ...(trouble ? { trouble } : {}),
    ...(pod.metadata?.finalizers?.length ? { finalizers: pod.metadata.finalizers } : {}),
    ...(bootstrap ? { bootstrapMembers: bootstrap.split(',') } : {}),
    ...(madeByCoreOS(pod) ? { madeByCoreOS: true } : {}),
    runAsUser: runAsUser(pod),
    ...(dataNotOurs(pod) ? { dataNotOurs: true } : {}),
  };
}

export function specOnPod(pod: V1Pod, cluster: EtcdCluster): SpecOnPod {
  const template = templateOnPod(pod, cluster.spec, cluster.metadata.name, cluster.metadata.generation ?? 0);
  return { template: template.digest, ...(template.recorded ? {} : { templateUnrecorded: true }), metadata: podMetadataDigest(pod, cluster.spec) };
}

export const memberView = (m: EtcdMember): MemberView => ({ id: m.id, name: memberName(m), isLearner: m.isLearner, started: m.name !== '' });

export const memberHealth = (name: string, s: EtcdStatus): MemberHealth => ({
  name, raftIndex: s.raftIndex, isLeader: s.leaderId !== '' && s.leaderId === s.memberId, leaderId: s.leaderId, revision: s.revision, dbSize: s.dbSize, dbSizeInUse: s.dbSizeInUse,
  ...(s.storageVersion ? { storageVersion: s.storageVersion } : {}), ...(s.downgradeTarget ? { downgradeTarget: s.downgradeTarget } : {}),
});

/** What a pass observes: the cluster's pods and claims, and etcd's view through them. */
export interface Observed extends EtcdView {
  pods: V1Pod[];
  /** The nodes the pods are on, by name (a node missing here is judged neither lost nor drained). */
  nodes: Map<string, V1Node>;
  claims: string[];
  /** Claims whose volume is on a node declared shut down (see strandedClaims): no member runs on them meanwhile. */
  strandedClaims: string[];
  claimMarks: ClaimMarks;
  retained: RetainedClaim[];
}

/** etcd's own quota when --quota-backend-bytes is not set. */
const ETCD_DEFAULT_QUOTA_BYTES = 2 * 1024 ** 3;

export interface PlannerSettings {
  replaceAfterMs: number;
  replaceOnNodeLossAfterMs: number;
  claimGraceMs: number;
  learnerMaxLag: number;
  stuckStoppingAfterMs: number;
  stalledAfterMs: number;
}

/** What the operator's own clock says of a cluster's members and claims (see Durations). */
export interface Timings {
  silentForMs: Record<string, number>;
  strandedForMs: Record<string, number>;
  unclaimedForMs: Record<string, number>;
  stoppingForMs: Record<string, number>;
  stalledForMs: Record<string, number>;
  unheardForMs?: number;
  noSpaceDisarmedForMs?: number;
}

/** The backup a lost majority would be rebuilt from, or why the newest one is refused. */
export type RebuildSource = { from: BackupView } | { refused: string };

/** What the spec and the operator's other kinds add to a pass's observation. */
export interface Context {
  tls?: MemberTls | undefined;
  /** The restore policy's backup, for a lost majority. */
  backup?: RebuildSource | undefined;
  /** The snapshot a restore or rebuild starts from, while the cluster is not bootstrapped. */
  restore?: RestoreSource | undefined;
  /** Free nodes members sharing a node may be spread to (see ClusterState.spreadTo). */
  spreadTo?: string[] | undefined;
  /** Nodes a member could go to under a hard one-member-per-node rule (see ClusterState.placeableNodes). */
  placeableNodes?: string[] | undefined;
  /** The CoreOS etcd-operator may still act, as its leader lock says (see ClusterState.coreosOperatorActivity). */
  coreosOperatorActivity?: string | undefined;
}

export function clusterState(cluster: EtcdCluster, o: Observed, settings: PlannerSettings, timings: Timings, { tls, backup, restore, spreadTo, placeableNodes, coreosOperatorActivity }: Context = {}): ClusterState {
  const rebuild = cluster.status?.rebuild;
  const recovery = cluster.status?.survivorRecovery;
  return {
    desiredSize: cluster.spec.size,
    generation: cluster.metadata.generation ?? 0,
    paused: cluster.spec.paused ?? false,
    bootstrapped: cluster.status?.bootstrapped ?? false,
    ...(coreosOperatorActivity ? { coreosOperatorActivity } : {}),
    pods: o.pods.map((p) => ({ ...podView(p, o.nodes.get(p.spec?.nodeName ?? '')), ...specOnPod(p, cluster) })),
    // A member whose only volume is on a node declared shut down has no claim to restart on: it is gone with its
    // data, as a wiped one is. The claim itself is left alone until the node is back (then set aside like any
    // removed member's): deleting it would wait on that node too.
    claims: o.claims.filter((c) => !o.strandedClaims.includes(c)),
    claimMarks: o.claimMarks,
    // The backup's claim may attach to one node only (ReadWriteOnce): one founder restores from it.
    ...(restore?.volume ? { singleFounder: true } : {}),
    retained: o.retained,
    members: o.members?.map(memberView),
    recordedMembers: cluster.status?.membership ?? [],
    health: [...o.statuses].map(([name, s]) => memberHealth(name, s)),
    // Learners exist from etcd 3.4; the operator supports nothing older.
    supportsLearners: true,
    targetVersion: specVersion(cluster.spec),
    targetConfig: configDigest(cluster.spec, tls),
    targetTemplate: podTemplateDigest(cluster.spec, cluster.metadata.name),
    targetRunAsUser: memberPodSecurity(cluster.spec.pod?.securityContext).runAsUser ?? 0,
    targetMetadata: specMetadataDigest(cluster.spec),
    alarms: o.alarms,
    ...(o.corruptionCheck ? { corruptionCheck: o.corruptionCheck } : {}),
    ...(spreadTo?.length ? { spreadTo } : {}),
    ...(placeableNodes ? { placeableNodes } : {}),
    ...(cluster.status?.noSpaceRecovery ? { noSpaceRecovery: cluster.status.noSpaceRecovery } : {}),
    quotaBackendBytes: cluster.spec.quotaBackendBytes ?? ETCD_DEFAULT_QUOTA_BYTES,
    ...(cluster.spec.defragmentation ? { defragmentation: cluster.spec.defragmentation } : {}),
    ...(backup && 'from' in backup ? { rebuildFrom: backup.from } : {}),
    ...(backup && 'refused' in backup ? { rebuildRefused: backup.refused } : {}),
    ...(rebuild && !rebuild.completedAt ? { rebuild: { cleared: rebuild.cleared ?? false } } : {}),
    ...(cluster.spec.restorePolicy?.fromSurvivor ? { survivorPolicy: cluster.spec.restorePolicy.fromSurvivor } : {}),
    ...(recovery?.survivor && !recovery.completedAt ? { survivorRecovery: { survivor: recovery.survivor, forced: recovery.forced ?? false } } : {}),
    ...settings,
    ...timings,
  };
}

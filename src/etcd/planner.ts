/**
 * The membership planner: from what is observed (pods, claims, etcd's member list and each member's status)
 * it picks the single next safe action for one cluster. Pure and deterministic: the executor performs the
 * action, and the next reconcile observes again, so a crash at any point resumes from what is there.
 *
 * Rules, in order of precedence:
 * 1. Paused: nothing. A rebuild from backup first removes every member of the lost cluster. A recovery
 *    from a survivor restarts it alone with --force-new-cluster, sets aside the claims of the members that
 *    dropped, then restarts it without the flag, before anything else.
 * 2. Bootstrap: a cluster that never came up starts all its first members together (state "new"); pods
 *    lost mid-bootstrap are recreated with the same initial cluster (as their pods and claims record it, while
 *    no pod, claim or member outside it is there); once every member started, mark it.
 *    A restore from a backup's claim starts one founder only (the claim may attach to one node at a time).
 *    Claims that a deleted EtcdCluster of the same name left behind are adopted instead: the cluster re-forms
 *    on their data (its members restarted as after a power loss), and never bootstraps beside them.
 *    Under antiAffinity (one member per node) no bootstrap starts more founders than nodes can take them.
 * 3. A member whose volume came back empty (its pod's data guard says so) is removed, never restarted under
 *    its ID. Then a change in flight is finished before anything else: a learner gets its pod, then is promoted
 *    when caught up; a member added but never started gets its pod, and is removed if it never starts. A learner
 *    no node fits, or one that answers but has come no closer to the leader's log for stalledAfterMs, is kept
 *    while the plan without it would only add it again (or wait), and removed when that plan would repair.
 * 4. Repairs: pods that are not members are deleted; a member whose pod is gone rejoins with its volume or,
 *    without one, is removed (to be replaced); under a CORRUPT alarm, the members whose HashKV differs from
 *    that of a quorum are removed, and so is a member silent past its threshold whose HashKV cannot be had,
 *    and the alarm disarmed once all agree (no quorum agreeing: a person decides); a member silent on a lost
 *    (NotReady) node past its threshold is removed (the fence), its pod then deleted without waiting for the
 *    node, and it is replaced on a live node, volume or not; a member whose pod failed or that answered
 *    nothing past the threshold is restarted on its volume or, without one, replaced. Removal needs answering
 *    voters for a quorum of the rest and of the desired size; the leader hands leadership over first. A
 *    removed member's claim (any claim whose member etcd no longer lists) is set aside, kept for a grace
 *    period, then deleted.
 * 4b. NOSPACE: compact the history, defragment every member (followers first), then disarm; each step is
 *    recorded in status so a restart redoes none, and recoveries are NOSPACE_RECOVERY_INTERVAL_MS apart at least.
 *    If the data still fills the quota, the alarm stays until keys are deleted (all etcd accepts past its
 *    quota): then the recovery starts again from the compaction.
 * 5. Readiness gate: while any member is unready, nothing else.
 * 6. Scale one member at a time: add (as a learner where supported), or remove a non-leader, members on a
 *    drained node first, then members still on an old version, then members on old settings. A member on a
 *    drained (cordoned) node gets its replacement first, elsewhere; the scale-down then removes it. Under
 *    antiAffinity a member is added only where a node can take it (any add: scale-up, replacement, roll).
 * 7. Roll members to the target version one at a time, once every member is caught up (one that has come no
 *    closer to the leader's log for stalledAfterMs is named for a person): a member with a
 *    volume restarts on its data with the new image; one without is replaced by adding a new member first
 *    (the scale-down of rule 6 then removes the old one). The leader goes last, after handing leadership to
 *    an upgraded member. A version etcd cannot move to is refused, and never started: new members keep
 *    the version that runs. Members whose settings (quota, compaction, TLS) or pod template (what spec.pod gives
 *    a pod that takes a new pod to change: resources, environment, placement, security context, priority)
 *    changed roll the same way; a member on a volume whose user changes is replaced, not restarted. A minor
 *    downgrade (3.6 to 3.5) first has etcd lower the cluster and storage versions (EnableDowngrade, then a Wait
 *    for the storage), and rolls only then; a spec back up cancels it. Before any of that, pods whose spec.pod
 *    labels or annotations differ are patched in place, one per pass: that restarts nothing.
 * 8. Spread again members that share a node when a node with none is free: add one first, then the scale-down
 *    removes one from the most crowded node (then zone, as any scale-down does among equals). Then
 *    defragment, when configured, a member whose database is mostly unused; followers before the leader.
 * Liveness: a Wait is only for what comes by itself within a bound (WAITING_FOR); where no rule can act and
 * nothing will come, the plan is Blocked with a cause from BLOCKED_CAUSES saying what a person must do.
 */

import { FORCE_NEW_CLUSTER_FIXED, OLDEST_SUPPORTED, atLeast, forceNewClusterKeepsData, highestVersion, minorAtMost, ofMinor, upgradeVerdict } from './versions.js';
import type { VersionVerdict } from './versions.js';
import { byName } from '../runtime/order.js';


export interface MemberView {
  id: string;
  /** The member's name, read from its peer URL (an added member has no name of its own until it starts). */
  name: string;
  isLearner: boolean;
  /** etcd lists a member's own name once it has started; before that it is only an added peer URL. */
  started: boolean;
}

export interface PodView {
  name: string;
  phase: 'Pending' | 'Running' | 'Succeeded' | 'Failed' | 'Unknown';
  ready: boolean;
  terminating: boolean;
  /** The members of the initial cluster, for a pod created by a bootstrap (state "new"). */
  bootstrapMembers?: string[];
  /** The etcd version the pod runs. */
  version: string;
  /** Finalizers on the pod object: they hold it, once deleted, until removed. */
  finalizers?: string[];
  /** The digest of the settings the pod was made with. */
  config: string;
  /** The digest of the pod template (the restart-needing fields spec.pod gives) it is on. */
  template: string;
  /** The template is not recorded on the pod (made by an earlier operator version) but judged: recorded once it is the spec's. */
  templateUnrecorded?: true;
  /** The digest of the spec.pod labels and annotations it carries, with the record of which keys are the user's. */
  metadata: string;
  /** Started with --force-new-cluster (a recovery from a survivor). */
  forced: boolean;
  /** Its data guard found the volume empty although the member had started on it: its data is gone. */
  dataLost: boolean;
  /** Its etcd container has never run (an image not pulled, an unschedulable pod): it has acknowledged nothing. */
  neverRan?: true;
  /** The cluster's generation it was made from (0 when unknown). */
  specGeneration?: number;
  /** The node it was scheduled to, once it was, and that node's zone (topology.kubernetes.io/zone), if known. */
  node?: string;
  zone?: string;
  /** Its node stopped reporting (NotReady): the pod may be gone with the node, or still run behind a cut. */
  nodeLost?: true;
  /** Its node is cordoned or marked for removal: its member moves elsewhere, replacement first. */
  nodeDraining?: true;
  /** The scheduler finds no node for it (PodScheduled False, Unschedulable): it runs only once a node fits. */
  unschedulable?: true;
  /** What keeps it from running etcd (for status; the planner acts on facts, not on these reasons). */
  trouble?: { reason: string; message: string };
  /** Made by the CoreOS etcd-operator (its `etcd_node` label): a member of a cluster this operator may take over. */
  madeByCoreOS?: true;
  /** The user its etcd runs as (0, root, when the pod does not say: etcd's images run as root). */
  runAsUser?: number;
  /** Its data guard found a data directory its user cannot use (a volume that did not apply the pod's fsGroup). */
  dataNotOurs?: true;
}

export interface MemberHealth {
  name: string;
  raftIndex: number;
  /** It says it leads: its leader is itself. */
  isLeader: boolean;
  /** The member ID it follows as its leader, '' while it knows none (an election, or cut off from its peers). */
  leaderId: string;
  revision: number;
  dbSize: number;
  dbSizeInUse: number;
  /** Its database's format version (etcd 3.6 on; absent or '' before, where it is the version it runs). */
  storageVersion?: string;
  /** The version a downgrade under way takes the cluster to (etcd 3.6 on); absent or '' when none is. */
  downgradeTarget?: string;
}

export interface AlarmView {
  memberId: string;
  alarm: 'NOSPACE' | 'CORRUPT';
}

export interface NoSpaceRecovery {
  compactedRevision?: number;
  defragmented?: string[];
}

/** A claim a deleted EtcdCluster of the same name left behind (or one adopted whose adoption status does not record yet). */
export interface RetainedClaim {
  name: string;
  /** Its member had been removed from etcd's member list: its data is not a member's to restart. */
  removed: boolean;
  /** The UID of the EtcdCluster whose member's data it holds ('' when unknown): one incarnation of the name. */
  incarnation: string;
  /** The claim says its member never ran on it: it holds nothing. (Claims of earlier versions say nothing.) */
  neverRan: boolean;
  /** When the API server made it (ms since the epoch): incarnations of one name follow each other in time. */
  createdMs: number;
}

/** What the cluster's own claims say of themselves. Claims made before these marks existed say nothing, and may hold data. */
export interface ClaimMarks {
  /** Claims whose member was never seen running on them: they hold nothing. */
  neverRan: string[];
  /** Claims whose member was seen running on them: a member's data, under its name. */
  started: string[];
  /** Claims set aside, whose member was removed from etcd: never restarted, deleted after the grace period. */
  setAside: string[];
  /** The initial members of the bootstrap that made claims, as the claims not set aside record it. */
  bootstrapMembers?: string[];
}

export interface ClusterState {
  desiredSize: number;
  /** The EtcdCluster's generation: a newer one than a pod's is a changed spec. */
  generation?: number;
  paused: boolean;
  /** Status records that the cluster came up once; never bootstrap such a cluster again. */
  bootstrapped: boolean;
  /**
   * The CoreOS etcd-operator may still act on the cluster, as its leader lock says (what to tell a person): before a
   * takeover, or after one if it was started again. Nothing is done while it may: two operators would act at once.
   */
  coreosOperatorActivity?: string;
  pods: PodView[];
  /** Members that have a data volume claim. */
  claims: string[];
  claimMarks: ClaimMarks;
  /** A bootstrap starts one member (a restore from a backup's claim, which one node at a time may mount); the rest join it. */
  singleFounder?: true;
  /** Claims left by a deleted EtcdCluster of this name, to adopt (never offered to a restore or a rebuild). */
  retained: RetainedClaim[];
  /** The member list, or undefined when no member answered. */
  members?: MemberView[];
  /** The member names of etcd's member list as status last recorded it: whom to restart when no member runs. */
  recordedMembers: string[];
  /** Status of each member that answered. */
  health: MemberHealth[];
  supportsLearners: boolean;
  /** A member that answers nothing this long is restarted on its volume or, without one, replaced. */
  replaceAfterMs: number;
  /**
   * How long each listed member with a pod has answered nothing, on the operator's own clock, counted afresh
   * for each new pod; members that answer are absent. Readiness is not used: a slow member fails its probe
   * while it still serves, and replacing it would cost a voter for nothing.
   */
  silentForMs: Record<string, number>;
  /**
   * How long each pod deleted and not gone has been stopping, on the operator's own clock; others are absent.
   * Past stuckStoppingAfterMs, one on a live node is a person's to look at (the operator never forces it).
   */
  stoppingForMs: Record<string, number>;
  stuckStoppingAfterMs: number;
  /** A member that answers nothing while its pod's node is lost is removed after this long, and replaced elsewhere. */
  replaceOnNodeLossAfterMs: number;
  /**
   * How long each listed member has answered nothing with its pod (stopping or not) on a lost node, on the
   * operator's own clock; others are absent.
   */
  strandedForMs: Record<string, number>;
  /**
   * How long each claim of no member (not in etcd's member list, no pod), and each claim a deleted cluster of
   * this name left whose member never ran, has been so, on the operator's clock.
   */
  unclaimedForMs: Record<string, number>;
  /**
   * Ready, schedulable nodes with no member, where members sharing a node may be spread again; absent when
   * there are none, or when the last such move in this very situation came to nothing a short while ago.
   */
  spreadTo?: string[];
  /**
   * Under a hard one-member-per-node rule (antiAffinity), the nodes a member could go to, holding a member or
   * not; absent without such a rule (any number of members fit). What only the scheduler judges (resources,
   * volumes) shows later, as an unschedulable pod.
   */
  placeableNodes?: string[];
  /** A removed member's claim is kept this long, then deleted. */
  claimGraceMs: number;
  /** A learner within this many raft entries of the leader is caught up. */
  learnerMaxLag: number;
  /**
   * How long each member that answers while behind the leader (more than learnerMaxLag entries, or with no
   * leader agreed on) has come no closer to the leader's log than it ever was, on the operator's own clock,
   * counted afresh for each new pod (see membersBehind); others are absent. A member that catches up however
   * slowly keeps coming closer; one that does not (a stuck disk, a network that drops its traffic, writes
   * faster than it applies them) is stalled.
   */
  stalledForMs: Record<string, number>;
  /** A member behind the leader that has come no closer for this long is stalled (CatchUpStalled). */
  stalledAfterMs: number;
  /**
   * How long no member has given the operator its member list, on the operator's own clock, while member pods
   * run: every member silent to it (a NetworkPolicy, DNS, a CA changed under the members, a hung etcd). Absent
   * while a member answers.
   */
  unheardForMs?: number;
  /** The version the spec asks for. */
  targetVersion: string;
  /** The digest of the settings the spec asks for. */
  targetConfig: string;
  /** The digest of the pod template the spec asks for. */
  targetTemplate: string;
  /** The user the spec's pod template runs etcd as. */
  targetRunAsUser?: number;
  /** The digest of the labels and annotations the spec asks for on member pods. */
  targetMetadata: string;
  alarms: AlarmView[];
  /** While CORRUPT is raised: each answering member's HashKV at one revision, by member name. */
  corruptionCheck?: { revision: number; hashes: Record<string, number> };
  /** Steps of a NOSPACE recovery already done. */
  noSpaceRecovery?: NoSpaceRecovery;
  /** How long ago the operator last disarmed NOSPACE (status records when); undefined if it never has. */
  noSpaceDisarmedForMs?: number;
  /** The quota the members enforce; data past it keeps NOSPACE raised. */
  quotaBackendBytes: number;
  defragmentation?: { unusedPercent: number; minDbSizeBytes?: number };
  /** The newest good backup of the restore policy: a majority lost for good is rebuilt from it. */
  rebuildFrom?: BackupView;
  /** Why the restore policy's newest backup is not used (too old), when it is not. */
  rebuildRefused?: string;
  /** A rebuild under way; cleared once the lost cluster's pods and claims are gone. */
  rebuild?: { cleared: boolean };
  /** restorePolicy.fromSurvivor: "auto" (the most advanced survivor) or a member's name. */
  survivorPolicy?: string;
  /** A recovery from a survivor under way; `forced` once it ran alone with --force-new-cluster. */
  survivorRecovery?: { survivor: string; forced: boolean };
}

export interface BackupView {
  backup: string;
  /** The object the snapshot is in, inside the backup's storage. */
  path: string;
  revision: number;
}

export type Action =
  | { type: 'Paused' }
  | { type: 'Bootstrap'; size: number; version: string }
  /** `ran`: the missing members whose claims say they ran, restarted on their data (no restore over it). */
  | { type: 'ResumeBootstrap'; initialMembers: string[]; missing: string[]; version: string; ran?: string[] }
  | { type: 'MarkBootstrapped' }
  | { type: 'Adopt'; claims: string[]; members: string[]; reason: string }
  /**
   * The running members the CoreOS etcd-operator made become this operator's, in place: each pod is recorded as made
   * from the spec's settings and pod template (it restarts nothing; a later change of them rolls it onto this
   * operator's pods). RecordTakeover follows once the records are seen.
   */
  | { type: 'TakeOver'; members: string[]; config: string; template: string; reason: string }
  /** Every pod of a cluster being taken over carries the records: status records the cluster as this operator's. */
  | { type: 'RecordTakeover'; members: string[] }
  | { type: 'CreatePod'; member: string; version: string; reason: string; forceNewCluster?: true; peers?: string[] }
  /** `spreading`: added to move a member off a node it shares (the scale-down then removes one of those). */
  | { type: 'AddMember'; learner: boolean; version: string; reason: string; spreading?: true }
  | { type: 'PromoteLearner'; memberId: string; member: string }
  | { type: 'RemoveMember'; memberId: string; member: string; reason: string }
  | { type: 'MoveLeader'; toMemberId: string; to: string; reason: string }
  /** `force`: deleted at once, without waiting for a kubelet that does not answer (only a pod of no listed member). */
  | { type: 'DeletePod'; member: string; deleteClaim: boolean; reason: string; force?: true; notMember?: true }
  | { type: 'DeleteClaim'; member: string; reason: string }
  /** Brings the pod's spec.pod labels and annotations to the spec's, restarting nothing; with `recordTemplate`, records that pod template on it. */
  | { type: 'PatchPodMetadata'; member: string; reason: string; recordTemplate?: string }
  /** Marks the claim as a removed member's: never restarted (nor adopted), deleted after the grace period. */
  | { type: 'SetClaimAside'; member: string; reason: string }
  /** Something that comes by itself within a bound (see WAITING_FOR), from `members`; the reason says what. */
  | { type: 'Wait'; awaiting: WaitingFor; members: string[]; reason: string }
  /** Nothing the operator may safely do: a person must act, as `reason` says. Surfaced as Degraded, reason `cause`. */
  | { type: 'Blocked'; cause: BlockedCause; reason: string }
  | { type: 'QuorumLost'; reason: string }
  | { type: 'CorruptionUndecided'; reason: string }
  | { type: 'StartRebuild'; from: BackupView; reason: string }
  | { type: 'ClearedForRebuild' }
  | { type: 'StartSurvivorRecovery'; survivor: string; revision: number; reason: string }
  | { type: 'RestartSurvivor'; survivor: string }
  | { type: 'CompleteSurvivorRecovery'; survivor: string }
  | { type: 'UpgradeRefused'; reason: string }
  | { type: 'DisarmAlarms'; alarms: AlarmView[]; reason: string }
  | { type: 'Compact'; revision: number; reason: string }
  | { type: 'Defragment'; member: string; reason: string }
  /** etcd's downgrade API: the cluster version and every member's storage version go down to `to` (a minor, "3.5"). */
  | { type: 'EnableDowngrade'; to: string; reason: string }
  /** The spec went back up during a downgrade: the cluster version returns to what the members run, and those that went down roll up. */
  | { type: 'CancelDowngrade'; reason: string }
  | { type: 'Steady' };

/**
 * What a Wait waits for, each with the bound within which it comes by itself or a rule acts instead (the
 * liveness properties in test/unit/planner-liveness.test.ts check that no Wait outlives its bound).
 */
export const WAITING_FOR = {
  PodStopping: 'a deleted pod on a live node stops within its grace period (past stuckStoppingAfterMs it is named for a person); one on a lost node is fenced, then force-deleted',
  MembersStarting: 'pods made for members run etcd (a listed one silent past replaceAfterMs is removed; what keeps a pod from running is reported as Degraded)',
  MembersAnswering: 'members whose pods run on live nodes answer; past replaceAfterMs the rules for silent members act',
  MemberReady: 'a member that answers passes its readiness probe within the probe period',
  CatchingUp: 'a member that answers comes closer to the leader\'s log within stalledAfterMs; past it, it is stalled: a learner is removed when a repair waits on it, else it (or a lagging voter) is named for a person',
  LeaderElection: 'a quorum that answers elects a leader within etcd\'s election timeout',
  NoSpaceInterval: 'NOSPACE raised again within NOSPACE_RECOVERY_INTERVAL_MS of the last recovery: the next one starts once that has passed',
  StorageDowngrade: 'once a downgrade is enabled, etcd forces a snapshot on every member that answers, which lowers its storage version at its next apply',
} as const;
export type WaitingFor = keyof typeof WAITING_FOR;

/**
 * The least time between two NOSPACE recoveries. A client that keeps writing what does not fit (a value larger
 * than the room a recovery leaves) raises NOSPACE again at once; recovering each time would compact, and
 * defragment every member (which holds its reads and writes meanwhile), every second.
 */
export const NOSPACE_RECOVERY_INTERVAL_MS = 60_000;

/**
 * Why a person must act: the closed list the reconciler surfaces as the Degraded condition's reason and a
 * Warning Event of that reason, each with what to do (the plan's reason names the objects). QuorumLost,
 * CorruptionUndecided and UpgradeRefused, which predate the list, are actions of their own.
 */
export const BLOCKED_CAUSES = {
  UnrecordedBootstrap: 'pods or claims that may hold data exist, but status records no bootstrap: record them as the members, or delete them to bootstrap anew',
  NodeLost: 'the members that could answer are on lost nodes, or one answers there and holds every change back: bring the nodes back, or taint those shut down for good out-of-service (their local volumes then count as lost)',
  TooFewAnswering: 'a repair would leave fewer answering voters than a quorum needs, and the silent ones will not answer by themselves: bring them back, or lower spec.size',
  BootstrapStalled: 'bootstrap members cannot start by themselves: delete the cluster\'s pods and claims to bootstrap anew, or restore from a backup',
  MembershipUnknown: 'no member runs, status records no membership, and the claims (of an earlier version) do not say which held a member: mark those that did',
  RetainedClaimsRemoved: 'a deleted cluster of this name left only removed members\' claims: delete them to bootstrap anew',
  SurvivorLost: 'the member a recovery from a survivor restarts alone cannot run (its data or node is lost): bring its node back, or end the recovery (remove status.survivorRecovery) to choose another survivor, or restore from a backup',
  PodStuckStopping: 'a pod deleted on a live node has not stopped within stuckStoppingAfterMs (a finalizer, a volume that does not unmount, a kubelet that hangs): see what holds it; once its containers stopped, force-delete it',
  CatchUpStalled: 'a member that answers has come no closer to the leader\'s log for stalledAfterMs (a slow or full disk, a network that drops its traffic, a snapshot it cannot take): check its disk, network and logs, or delete its pod to restart it; a learner, kept while nothing else waits on it, may also be removed (etcdctl member remove) to be added anew, or spec.size lowered',
  Unreachable: 'member pods may run, but none has answered the operator past replaceAfterMs: see whether etcd runs, and what stands between the operator and the members (a NetworkPolicy, DNS, TLS)',
  TakeoverUnsafe: 'members made by the CoreOS etcd-operator are in a state that is not safe to take over (a change of membership or version it left unfinished, a member failed or silent, members on volumes, etcd older than 3.5): undo it by hand as the message says, and the cluster is taken over',
  CoreOSOperatorRunning: 'the CoreOS etcd-operator may still act on the cluster (its leader lock renewed lately, or unreadable): delete its Deployment; nothing is done until its lock has gone unrenewed a minute',
  AlarmNamesNoMember: 'etcd lists an alarm that names no member (a removed member\'s, or member 0): disarming member 0 would disarm every alarm, CORRUPT included, so the operator leaves it: check it and disarm it (etcdctl alarm disarm)',
  QuotaFull: 'etcd raised NOSPACE and the live data fills the quota even after compacting and defragmenting: delete keys (past its quota etcd takes deletes; the operator then compacts again), or raise spec.quotaBackendBytes',
  TooFewNodes: 'a member the cluster needs has no node: antiAffinity allows one member per node and every node that can take one holds one, or the scheduler finds none that fits its learner (kept, not added anew): add nodes, lower spec.size, or relax spec.pod placement',
} as const;
export type BlockedCause = keyof typeof BLOCKED_CAUSES;

/** Every cause a plan gives for a person to act. */
export type PersonNeeded = BlockedCause | 'QuorumLost' | 'CorruptionUndecided' | 'UpgradeRefused';

/** The cause a person must act on, if the action is one. */
export function personNeeded(a: Action): PersonNeeded | undefined {
  if (a.type === 'Blocked') return a.cause;
  return a.type === 'QuorumLost' || a.type === 'CorruptionUndecided' || a.type === 'UpgradeRefused' ? a.type : undefined;
}

export const quorum = (voters: number): number => Math.floor(voters / 2) + 1;

/** The voting members (learners do not count towards quorum). */
export const votersOf = (members: readonly MemberView[] = []): MemberView[] => members.filter((m) => !m.isLearner);

/** Whether a member answered its status call. */
export const answers = (health: readonly MemberHealth[], name: string): boolean => health.some((h) => h.name === name);

/** How many of these members answered their status call, with or without a leader. */
export const countAnswering = (members: readonly MemberView[], health: readonly MemberHealth[]): number =>
  members.filter((m) => answers(health, m.name)).length;

/**
 * The leader the voters agree on: a voter that answers as leader and that a quorum of the voters answer
 * following. Members that all answer but elected no leader (or follow different ones) agree on none.
 */
export function agreedLeader(voters: readonly MemberView[], health: readonly MemberHealth[]): MemberView | undefined {
  const leader = voters.find((v) => health.some((h) => h.name === v.name && h.isLeader && h.leaderId === v.id));
  return leader && countFollowing(voters, health, leader) >= quorum(voters.length) ? leader : undefined;
}

/** How many of the voters answered naming `leader` as theirs (the leader itself included). */
const countFollowing = (voters: readonly MemberView[], health: readonly MemberHealth[], leader: MemberView): number =>
  voters.filter((v) => health.some((h) => h.name === v.name && h.leaderId === leader.id)).length;

/** How many voters serve: they answered, following the leader the voters agree on (none without one). */
export function countServing(voters: readonly MemberView[], health: readonly MemberHealth[]): number {
  const leader = agreedLeader(voters, health);
  return leader ? countFollowing(voters, health, leader) : 0;
}

/** The status of the leader the voters agree on, as it reports it: one that only says it leads (cut off, a stale term) is none. */
const leaderHealth = (voters: readonly MemberView[], health: readonly MemberHealth[]): MemberHealth | undefined =>
  health.find((h) => h.name === agreedLeader(voters, health)?.name);

/** How many raft entries a member is behind the leader's log (all of it, for one that did not answer). */
const lagBehind = (leader: MemberHealth, health: readonly MemberHealth[], name: string): number =>
  leader.raftIndex - (health.find((h) => h.name === name)?.raftIndex ?? 0);

/**
 * The members that answer but are not caught up: by how many raft entries each is behind the leader the voters
 * agree on, past `maxLag`; with no leader agreed on, every one that answers, by an unknown (infinite) lag, as none
 * can come closer without one. What the reconciler times across passes (ClusterState.stalledForMs).
 */
export function membersBehind(members: readonly MemberView[], health: readonly MemberHealth[], maxLag: number): Map<string, number> {
  const leader = leaderHealth(votersOf(members), health);
  const lags = members.filter((m) => answers(health, m.name)).map((m) => [m.name, leader ? lagBehind(leader, health, m.name) : Infinity] as const);
  return new Map(lags.filter(([, lag]) => lag > maxLag));
}

/** A member that answers, behind the leader, and has come no closer to its log for stalledAfterMs. */
const stalled = (s: ClusterState, name: string): boolean => answers(s.health, name) && (s.stalledForMs[name] ?? 0) > s.stalledAfterMs;

export interface Rollout {
  verdict: VersionVerdict;
  /** Member pods not on the target version. */
  stale: string[];
  /** Member pods on the target version whose settings or pod template differ. */
  reconfigure: string[];
  /** Member pods whose labels and annotations differ from the spec's, or whose pod template, the spec's, is not recorded: patched, not restarted. */
  relabel: string[];
  /** The version new members get: the target if it may be rolled out, else the highest that runs. */
  newMemberVersion: string;
}

export function rollout(s: ClusterState): Rollout {
  const pods = s.pods.filter((p) => !p.terminating && (!s.members || s.members.some((m) => m.name === p.name)));
  // The version rules judge what ran: a pod whose etcd never started (its image does not exist, say) has no data of its version.
  const running = [...new Set(pods.filter((p) => !p.neverRan).map((p) => p.version).filter((v) => v !== ''))];
  const verdict = upgradeVerdict(running, s.targetVersion);
  return {
    verdict,
    stale: pods.filter((p) => p.version !== s.targetVersion).map((p) => p.name).sort(),
    reconfigure: pods.filter((p) => p.version === s.targetVersion && (p.config !== s.targetConfig || p.template !== s.targetTemplate)).map((p) => p.name).sort(),
    relabel: pods.filter((p) => p.metadata !== s.targetMetadata || unrecordedTarget(s, p)).map((p) => p.name).sort(),
    // A downgrade's older release runs only on data whose storage version went down first: until then, new members
    // and members restarting on their data get the release that runs.
    newMemberVersion: verdict.allowed && (!verdict.downgradeTo || storageDowngraded(s, verdict.downgradeTo)) ? s.targetVersion : highestVersion(running) ?? s.targetVersion,
  };
}

/** Whether a downgrade to `minor` is enabled, as a member that answers reports it. */
const downgradeEnabled = (s: ClusterState, minor: string): boolean => s.health.some((h) => ofMinor(h.downgradeTarget, minor));

/**
 * Whether the members' data can be run by the release one minor down. Either a member already runs it: the cluster
 * version cannot rise above it then, nor the storage versions (an upgrade turned back half way). Or etcd's downgrade
 * is enabled, which pins the cluster version down, and a quorum of voters answers, every one that answers with a
 * storage version of that minor. Without the downgrade enabled, data that still reads as the older minor right
 * after an upgrade is no warrant: the leader raises the cluster version within seconds, and a member restarted on
 * the older release then refuses to start for ever. Not "every voter": the roll restarts a member by deleting its
 * pod, and that member, silent until its new pod runs, must get the older release, or the roll would make it anew
 * on the newer one for ever (seen on the lab). A member silent all through the lowering whose pod is then lost gets
 * the older release on data that was not lowered: etcd refuses to start there (its data untouched), which its pod's
 * condition shows.
 */
export function storageDowngraded(s: ClusterState, minor: string): boolean {
  const voters = votersOf(s.members);
  // A voter whose etcd served on it, not any pod: one the rules are about to delete, or one that never ran, proves nothing.
  if (s.pods.some((p) => !p.terminating && p.ready && voters.some((m) => m.name === p.name) && minorAtMost(p.version, minor))) return true;
  const answering = s.health.filter((h) => voters.some((m) => m.name === h.name));
  return downgradeEnabled(s, minor) && voters.length > 0 && answering.length >= quorum(voters.length)
    && answering.every((h) => minorAtMost(h.storageVersion, minor));
}

/**
 * The steps of a downgrade before any member restarts on the older release: etcd is asked to take the cluster down
 * (it lowers the cluster version and forces a snapshot on every member), then the roll waits for every member's
 * storage version. Undefined once the data is ready: the members then roll as for any version.
 */
function downgradeStep(s: ClusterState, voters: MemberView[], minor: string): Action | undefined {
  if (storageDowngraded(s, minor)) return undefined;
  if (!downgradeEnabled(s, minor)) return { type: 'EnableDowngrade', to: minor, reason: `downgrading to ${s.targetVersion}: etcd lowers the cluster version and each member's storage version to ${minor} first` };
  const behind = voters.filter((m) => !s.health.some((h) => h.name === m.name && minorAtMost(h.storageVersion, minor))).map((m) => m.name);
  return { type: 'Wait', awaiting: 'StorageDowngrade', members: behind, reason: `waiting for the storage version of ${behind.join(', ')} to go down to ${minor} before any member runs ${s.targetVersion}` };
}

/**
 * A downgrade the spec no longer asks for (it went back up) is cancelled: etcd would keep the cluster version down
 * while it stays enabled, and the members that went down, if any, then roll up as for any upgrade.
 */
function unwantedDowngrade(s: ClusterState, r: Rollout): Action | undefined {
  const target = s.health.find((h) => h.downgradeTarget)?.downgradeTarget;
  if (!target || !r.verdict.allowed || minorAtMost(s.targetVersion, target)) return undefined;
  return { type: 'CancelDowngrade', reason: `the spec asks for ${s.targetVersion} again: cancelling the downgrade to ${target}` };
}

/** A pod of an earlier operator version judged on the spec's pod template, which it does not record yet. */
const unrecordedTarget = (s: ClusterState, p: PodView): boolean => p.templateUnrecorded === true && p.template === s.targetTemplate;

export function plan(s: ClusterState): Action {
  if (s.paused) return { type: 'Paused' };
  if (s.coreosOperatorActivity) return { type: 'Blocked', cause: 'CoreOSOperatorRunning', reason: s.coreosOperatorActivity };
  const pods = s.pods.filter((p) => !p.terminating);
  const r = rollout(s);
  if (s.survivorRecovery) return planSurvivorRecovery(s, s.survivorRecovery, r.newMemberVersion);
  if (clearingForRebuild(s)) return clearForRebuild(s, pods);
  if (!s.bootstrapped) return planBootstrap(s, pods, r.newMemberVersion);
  if (!s.members) return planWithoutMemberList(s, pods, r.newMemberVersion);
  return planMembership(s, pods, s.members, r);
}

function planBootstrap(s: ClusterState, pods: PodView[], version: string): Action {
  if (pods.some((p) => p.madeByCoreOS)) return takeover(s, pods);
  // The bootstrap is recorded on its pods and on its claims, which outlive them: a bootstrap whose pods are
  // all gone (deleted one by one to be made again from a fixed spec, evicted, deleted by a person) resumes
  // from its claims, which the resumed pods mount, data or not.
  const initial = pods.find((p) => p.bootstrapMembers)?.bootstrapMembers ?? s.claimMarks.bootstrapMembers;
  // The record outlives the bootstrap: a cluster that ran on and replaced founders, then lost its status,
  // still shows it. Resuming it would start the removed founders anew with the original token (their old
  // member and cluster IDs), a quorum of their own. It is this bootstrap's only while nothing else is there.
  if (initial && !onlyBootstrapMembers(s, initial)) return unrecordedBootstrap(s);
  if (!initial) {
    // Pods (even stopping ones) or claims without a recorded bootstrap: something made them whose plan this
    // pass cannot see. Founding a cluster beside them could make a second one behind the same Service.
    const stopping = s.pods.find((p) => p.terminating);
    if (stopping?.nodeLost) return nodeLost(s);
    if (stopping) return awaitStopping(s, [stopping.name], `pod ${stopping.name} of no recorded bootstrap is stopping; not bootstrapping beside it`);
    // A claim that says its member never ran should hold nothing, whoever made it: it is no reason not to
    // bootstrap. The mark may be stale (a member seen running too late to record it), so the claim is set
    // aside, kept for the grace period, rather than deleted.
    const empty = liveClaims(s).find((c) => s.claimMarks.neverRan.includes(c));
    if (s.pods.length === 0 && !s.members && empty) return { type: 'SetClaimAside', member: empty, reason: 'a claim of no recorded bootstrap whose member never ran on it: kept for the grace period, never restarted' };
    if (s.pods.length > 0 || liveClaims(s).length > 0) return unrecordedBootstrap(s);
    return expiredClaim(s) ?? adoption(s.retained) ?? bootstrap(s, version);
  }
  // Once every initial member has started, the cluster exists: from then on no member is ever created with
  // state "new" again, so a member that lost its data cannot found a second, empty cluster.
  const started = initial.filter((m) => s.members?.some((v) => v.name === m && v.started));
  if (started.length === initial.length) return { type: 'MarkBootstrapped' };
  // Before any member started nothing was acknowledged, and a pod whose etcd never ran holds nothing: one made
  // from an older spec (a version with no image, a node selector no node has) is made again from this one, and
  // so is one that failed for good (evicted under node pressure while a restore fetched its snapshot), which
  // would otherwise hold the bootstrap for ever.
  const unborn = s.members?.some((m) => m.started) ? []
    : pods.filter((p) => initial.includes(p.name) && p.neverRan === true && !p.dataLost && !p.nodeLost);
  const outdated = unborn.find((p) => (p.specGeneration ?? 0) < (s.generation ?? 0));
  if (outdated) return { type: 'DeletePod', member: outdated.name, deleteClaim: false, reason: `its etcd never ran; making it again from generation ${s.generation ?? 0} of the spec` };
  const failed = unborn.find((p) => p.phase === 'Failed');
  if (failed) return { type: 'DeletePod', member: failed.name, deleteClaim: false, reason: 'its pod failed before its etcd ever ran; making it again' };
  const missing = initial.filter((m) => !pods.some((p) => p.name === m) && !started.includes(m));
  // A pod of the name still stopping (deleted to be made again) must be gone before it is made again.
  const stopping = s.pods.find((p) => p.terminating && missing.includes(p.name));
  if (stopping?.nodeLost) return nodeLost(s);
  if (stopping) return awaitStopping(s, [stopping.name], `pod ${stopping.name} is stopping; the bootstrap makes it again once it is gone`);
  const ran = missing.filter((m) => s.claimMarks.started.includes(m));
  if (missing.length > 0) return { type: 'ResumeBootstrap', initialMembers: initial, missing, version, ...(ran.length > 0 ? { ran } : {}) };
  // A pod that failed after its etcd ran holds data: on a claim it is restarted there; otherwise, or when its
  // data or node is lost, the bootstrap cannot finish by itself.
  const ranFailed = pods.find((p) => initial.includes(p.name) && p.phase === 'Failed' && !p.neverRan && liveClaims(s).includes(p.name) && !p.nodeLost && !p.dataLost);
  if (ranFailed) return { type: 'DeletePod', member: ranFailed.name, deleteClaim: false, reason: 'its pod failed after its etcd ran; restarting it on its data' };
  const waitingOn = initial.filter((m) => !started.includes(m));
  if (!s.pods.some((p) => waitingOn.includes(p.name) && mayRun(p))) return bootstrapStalled(s, waitingOn);
  const starting = waitingOn.filter((m) => s.pods.some((p) => p.name === m && mayRun(p)));
  return { type: 'Wait', awaiting: 'MembersStarting', members: starting, reason: `bootstrapping: ${started.length} of ${initial.length} members started` };
}

const unsafe = (reason: string): Action => ({ type: 'Blocked', cause: 'TakeoverUnsafe', reason: `not taking over the CoreOS cluster: ${reason}` });

/**
 * A cluster the CoreOS etcd-operator made, taken over in place once what runs is a settled etcd cluster: each pod a
 * started voter, each voter a pod, all answering one leader, on versions etcd lets the spec's be rolled out from.
 * Anything else is a change that operator left half done: nothing is touched, and the reason says what a person can
 * do by hand (never "start the CoreOS operator again": on a cluster this operator's status was written to, it either
 * stops at "created" or, with no phase stored, boots a new seed member and deletes the old pods, data and all).
 * Members on volumes are not taken over: CoreOS's claims carry none of this operator's records (member started,
 * cluster UID), and restarting one on its claim is not proven.
 *
 * Two steps, so that no pass ever sees the cluster recorded as its own while its cache still shows pods without the
 * records (it would roll them all, as made from other settings): first the pods get the spec's settings and pod
 * template digests (TakeOver), and once every pod is seen carrying them, status records the cluster (RecordTakeover).
 */
function takeover(s: ClusterState, pods: PodView[]): Action {
  // A pod stopping is a change under way (the CoreOS operator replacing a member, a person, an eviction): what is
  // left once it is gone is judged then.
  const stopping = s.pods.find((p) => p.terminating);
  if (stopping?.nodeLost) return nodeLost(s);
  if (stopping) return awaitStopping(s, [stopping.name], `pod ${stopping.name} of the CoreOS cluster is stopping; judging the takeover once it is gone`);
  const others = pods.filter((p) => !p.madeByCoreOS).map((p) => p.name);
  if (others.length > 0) return unsafe(`pods ${others.join(', ')} were not made by the CoreOS operator: see who made them, and delete them if they are no members`);
  const names = pods.map((p) => p.name).sort();
  if (s.claims.length > 0) {
    return unsafe(`members ${names.join(', ')} are on volumes (claims ${s.claims.join(', ')}), which this version does not take over: back the cluster up (an EtcdBackup) `
      + 'and restore it under a new name (an EtcdRestore: it never replaces a cluster that exists)');
  }
  if (!s.members) return unsafe(`no member of ${names.join(', ')} answered its member list: see whether etcd runs (kubectl logs) and what stands between the operator and the members (a NetworkPolicy, TLS)`);
  const unstarted = s.members.filter((m) => !m.started || m.isLearner);
  if (unstarted.length > 0) {
    return unsafe(`members ${unstarted.map((m) => `${m.name} (ID ${m.id})`).join(', ')} were added and never started or promoted: a scale the CoreOS operator left unfinished. `
      + 'Remove them (etcdctl member remove <id>); the cluster is taken over then, and spec.size adds members as this operator does');
  }
  const listed = s.members.map((m) => m.name);
  const podless = s.members.filter((m) => !names.includes(m.name));
  if (podless.length > 0) {
    return unsafe(`members ${podless.map((m) => `${m.name} (ID ${m.id})`).join(', ')} have no pod (on emptyDir, their data went with it): a replacement left unfinished, or pods deleted. `
      + 'Once sure no pod of theirs runs, remove them (etcdctl member remove <id>); the cluster is taken over then, and spec.size brings it back to size');
  }
  const unlisted = names.filter((n) => !listed.includes(n));
  if (unlisted.length > 0) return unsafe(`pods ${unlisted.join(', ')} are no members of etcd (a scale or replacement left unfinished): delete them (kubectl delete pod ${unlisted.join(' ')})`);
  if (pods.some((p) => p.nodeLost)) return nodeLost(s);
  // The CoreOS operator's pods never restart (restartPolicy Never): a failed one is gone for good.
  const failed = pods.filter((p) => p.phase === 'Failed').map((p) => s.members?.find((m) => m.name === p.name)).filter((m) => m !== undefined);
  if (failed.length > 0) {
    return unsafe(`the pods of members ${failed.map((m) => `${m.name} (ID ${m.id})`).join(', ')} failed, and CoreOS's pods never restart: remove those members (etcdctl member remove <id>) `
      + 'and delete their pods; the cluster is taken over then, and spec.size brings it back to size');
  }
  const silent = names.filter((n) => !answers(s.health, n));
  const longSilent = silent.filter((n) => (s.silentForMs[n] ?? 0) > s.replaceAfterMs);
  if (longSilent.length > 0) return unsafe(`members ${longSilent.join(', ')} have not answered for over ${s.replaceAfterMs / 1000} s: see kubectl logs; one that will not come back, remove (etcdctl member remove <id>) and delete its pod`);
  if (silent.length > 0) return { type: 'Wait', awaiting: 'MembersAnswering', members: silent, reason: `members ${silent.join(', ')} of the CoreOS cluster do not answer yet` };
  const versions = [...new Set(pods.map((p) => p.version))].sort();
  const old = versions.find((v) => !atLeast(v, OLDEST_SUPPORTED));
  if (old !== undefined) return unsafe(`members run etcd ${old}, older than ${OLDEST_SUPPORTED}, the oldest this operator runs: upgrade them with the CoreOS operator first (3.4, then 3.5), or move the data by a backup and an EtcdRestore (see the README)`);
  // An upgrade the CoreOS operator left half done is finished by this operator's roll, where etcd allows it.
  const verdict = upgradeVerdict(versions, s.targetVersion);
  if (!verdict.allowed) return unsafe(`members run ${versions.join(', ')}, and spec.version ${s.targetVersion} cannot be rolled out from them (${verdict.message}): set spec.version to one that can`);
  if (!agreedLeader(votersOf(s.members), s.health)) return { type: 'Wait', awaiting: 'LeaderElection', members: names, reason: 'the CoreOS cluster\'s members answer but follow no one leader yet' };
  if (pods.some((p) => p.config !== s.targetConfig || p.template !== s.targetTemplate || p.templateUnrecorded)) {
    return {
      type: 'TakeOver', members: names, config: s.targetConfig, template: s.targetTemplate,
      reason: `members ${names.join(', ')}, made by the CoreOS etcd-operator, all answer one leader: taking them over in place, nothing restarted`,
    };
  }
  return { type: 'RecordTakeover', members: names };
}

/**
 * The founders, all at once, if each can run: under the hard one-member-per-node rule, founders beyond the
 * nodes would be voters that never run, a cluster without the fault tolerance its size promises (issue 32,
 * finding 13). Nothing is started then, and the numbers are told.
 */
function bootstrap(s: ClusterState, version: string): Action {
  const size = s.singleFounder ? 1 : s.desiredSize;
  const placeable = s.placeableNodes;
  if (!placeable || placeable.length >= size) return { type: 'Bootstrap', size, version };
  const fitting = placeable.length % 2 === 1 ? placeable.length : placeable.length - 1;
  const lower = fitting > 0 ? `, lower spec.size to ${fitting}` : '';
  return {
    type: 'Blocked', cause: 'TooFewNodes',
    reason: `not bootstrapping: spec.pod.antiAffinity places one member per node, and ${placeable.length} node(s) can take one (${placeable.join(', ') || 'none'}: Ready, `
      + `schedulable, matching spec.pod.nodeSelector, taints tolerated), fewer than the ${size} members: add nodes${lower}, or set antiAffinity to false`,
  };
}

/**
 * A member added but never started whose pod was made from an earlier spec.pod (the pod template): its pod is made
 * again from the spec. Kept while it could not run (a learner no node fits, say), it would otherwise wait on the
 * very resources or placement the user has since fixed (trial of issue 32). It never ran, so its pod holds nothing.
 */
function outdatedUnstarted(s: ClusterState, m: MemberView): Action | undefined {
  const pod = s.pods.find((p) => p.name === m.name);
  // A pod whose data guard found its volume emptied is no unborn member's, whatever etcd lists: the rules for a lost
  // volume replace it (seed 724645762 of the invariants restarted it on that volume).
  if (m.started || !pod || pod.terminating || pod.nodeLost || pod.dataLost || answers(s.health, m.name) || pod.template === s.targetTemplate) return undefined;
  return { type: 'DeletePod', member: m.name, deleteClaim: false, reason: 'its etcd never ran; making its pod again from the changed spec.pod' };
}

/**
 * A learner that cannot finish joining is kept, not removed, while the plan made without it would only add it
 * again (or wait): removed, it would be added again at once, with a new claim, and fare no better. The plan
 * without it is returned then. When that plan does something else (a repair, a move it may give up), the
 * learner is removed: it casts no vote, and holds every other change while it is there. Undefined then.
 */
function keptLearner(s: ClusterState, learner: MemberView): Extract<Action, { type: 'AddMember' | 'Wait' }> | undefined {
  const others = { ...s, members: s.members?.filter((m) => m !== learner), pods: s.pods.filter((p) => p.name !== learner.name), claims: s.claims.filter((c) => c !== learner.name) };
  const without = plan(others);
  const readded = without.type === 'AddMember' && !without.spreading;
  return readded || without.type === 'Wait' ? without : undefined;
}

/**
 * A learner the scheduler can place nowhere, removed, would never run either: a drain's replacement churned so
 * for ever, a cloud disk a minute (issue 32, finding 6). Kept (see keptLearner), its pod runs as soon as a node
 * fits, and a person is told.
 */
function keptUnscheduled(s: ClusterState, learner: MemberView): Action | undefined {
  const without = keptLearner(s, learner);
  if (!without) return undefined;
  const why = s.pods.find((p) => p.name === learner.name)?.trouble?.message ?? `member pod ${learner.name} cannot be scheduled`;
  return {
    type: 'Blocked', cause: 'TooFewNodes',
    reason: `${why}. Learner ${learner.name} is kept, not removed and added again, and starts once a node fits it (${without.reason}): add nodes or free resources, or relax spec.pod placement`,
  };
}

/**
 * A learner that answers but has come no closer to the leader's log for stalledAfterMs would hold every other
 * change for ever (issue 32, finding 7). What keeps it (its disk, its network) would keep a new member added in
 * its place as well, so it is kept (see keptLearner) and a person told; when a repair waits on it, it goes.
 */
function keptStalled(s: ClusterState, learner: MemberView, leader: MemberHealth | undefined): Action | undefined {
  const without = keptLearner(s, learner);
  if (!without) return undefined;
  return catchUpStalled(s, learner, leader, `learner ${learner.name}`,
    `it is kept, not removed and added again (${without.reason}); if a new member would fare better, remove it from etcd (etcdctl member remove, with its ID as etcdctl member list shows it) and one is added in its place, or lower spec.size`);
}

/** A member that answers but has come no closer to the leader's log for stalledAfterMs: what to look at, and `otherwise` what else a person may do. */
function catchUpStalled(s: ClusterState, m: MemberView, leader: MemberHealth | undefined, who: string, otherwise: string): Action {
  const behind = leader ? `${lagBehind(leader, s.health, m.name)} raft entries behind the leader` : 'with no leader the voters agree on';
  return {
    type: 'Blocked', cause: 'CatchUpStalled',
    reason: `${who} answers but has come no closer to the leader's log for over ${Math.round(s.stalledAfterMs / 1000)} s (${behind}): check its disk and network `
      + `(kubectl logs ${m.name} -c etcd), or delete its pod to restart it; ${otherwise}`,
  };
}

/**
 * Waits for pods deleted on live nodes to stop, as their kubelet does within their grace period. One stopping
 * past stuckStoppingAfterMs (a finalizer, a volume that does not unmount, a kubelet that hangs) would be waited
 * for for ever: it is named for a person (issue 32, finding 7). The operator never force-deletes a pod on a live
 * node: its containers may still run, and a member of that name made beside it would run twice. One on a lost
 * node is no person's: its silent member is fenced past the node-loss threshold, then its pod force-deleted.
 */
function awaitStopping(s: ClusterState, pods: string[], reason: string): Action {
  const onLiveNode = (n: string): boolean => !s.pods.some((p) => p.name === n && p.nodeLost);
  const stuck = pods.filter((n) => onLiveNode(n) && (s.stoppingForMs[n] ?? 0) > s.stuckStoppingAfterMs);
  if (stuck.length === 0) return { type: 'Wait', awaiting: 'PodStopping', members: pods, reason };
  // A finalizer holds the pod object whatever its containers do, a forced delete included: it is named first.
  const held = s.pods.filter((p) => stuck.includes(p.name) && (p.finalizers ?? []).length > 0);
  const finalizers = held.map((p) => `pod ${p.name} carries finalizers ${(p.finalizers ?? []).join(', ')}: once what should remove them is done or gone, `
    + `kubectl patch pod ${p.name} --type=json -p '[{"op":"remove","path":"/metadata/finalizers"}]'; `).join('');
  return {
    type: 'Blocked', cause: 'PodStuckStopping',
    reason: `${reason}, but pod ${stuck.join(', ')} has been stopping for over ${Math.round(s.stuckStoppingAfterMs / 1000)} s on a live node: ${finalizers}see what holds it `
      + `(kubectl describe pod ${stuck.join(' ')}: volumes, the kubelet's events); once its containers have stopped, kubectl delete pod --force --grace-period=0 ${stuck.join(' ')}`,
  };
}

/** Whether every pod, live claim and listed member is one of these initial members. */
const onlyBootstrapMembers = (s: ClusterState, initial: string[]): boolean =>
  [...s.pods.map((p) => p.name), ...liveClaims(s), ...(s.members ?? []).map((m) => m.name)].every((n) => initial.includes(n));

/**
 * Pods or claims of this cluster whose status records neither a bootstrap nor its members (status lost, say):
 * founding a cluster beside them could put a second one behind the same Service, and taking them for
 * members may restart what was never one. A person says which.
 */
function unrecordedBootstrap(s: ClusterState): Action {
  const names = [...new Set([...s.pods.map((p) => p.name), ...liveClaims(s)])].sort();
  return {
    type: 'Blocked', cause: 'UnrecordedBootstrap',
    reason: `pods or claims ${names.join(', ')} of this cluster were made by no bootstrap its status records: if they hold data to keep, record them as its members `
      + `(kubectl patch etcdcluster <name> --subresource=status --type=merge -p '{"status":{"bootstrapped":true,"membership":[${names.map((n) => `"${n}"`).join(',')}]}}'); `
      + `if not, delete them (kubectl delete pod,pvc ${names.join(' ')}) and the cluster bootstraps anew`,
  };
}

/** Bootstrap members whose pods cannot run by themselves (failed after their etcd ran without a claim, data or node lost). */
function bootstrapStalled(s: ClusterState, members: string[]): Action {
  const pods = s.pods.filter((p) => members.includes(p.name));
  const why = pods.map((p) => `${p.name}: ${p.terminating ? 'stopping' : ''}${p.nodeLost ? ` on lost node ${p.node ?? ''}` : p.dataLost ? ' its data is gone' : p.phase === 'Failed' ? ' failed after its etcd ran' : ''}`.trim());
  return {
    type: 'Blocked', cause: 'BootstrapStalled',
    reason: `the bootstrap cannot finish by itself (${why.join('; ')}); members that started may have acknowledged writes: if none is needed, delete the cluster's pods and claims `
      + `(kubectl delete pod,pvc ${pods.map((p) => p.name).join(' ')}) and it bootstraps anew; otherwise restore it from a backup`,
  };
}

/**
 * The claims of a deleted cluster of this name hold its data. A claim whose member never ran should hold
 * nothing and is no member's: it is not adopted (a data guard would refuse it for ever), nor a reason not to
 * bootstrap, and it is deleted after the grace period (its mark may be stale). Of the rest, exactly one
 * incarnation is adopted, the newest (incarnations of one name follow each other): two sets of members
 * adopted together would each restart as a cluster of its own behind one Service. The others are named and
 * left alone for a person. A removed member's claim is adopted but not restarted (it goes after the grace
 * period, as it would have); with no member's data in the newest incarnation a person decides. Undefined
 * when no claim may hold data.
 */
function adoption(all: RetainedClaim[]): Action | undefined {
  const retained = all.filter((c) => !c.neverRan);
  if (retained.length === 0) return undefined;
  const newest = newestIncarnation(retained);
  const adopted = retained.filter((c) => c.incarnation === newest);
  const claims = adopted.map((c) => c.name).sort();
  const members = adopted.filter((c) => !c.removed).map((c) => c.name).sort();
  const left = retained.filter((c) => c.incarnation !== newest).map((c) => c.name).sort();
  const leftAlone = left.length > 0 ? `; claims ${left.join(', ')} of an earlier incarnation are left alone: delete them once their data is not needed (kubectl delete pvc ${left.join(' ')})` : '';
  if (members.length === 0) {
    return {
      type: 'Blocked', cause: 'RetainedClaimsRemoved',
      reason: `claims ${claims.join(', ')} of a deleted cluster of this name hold only removed members' data: delete them (kubectl delete pvc ${claims.join(' ')}) and the cluster bootstraps anew${leftAlone}`,
    };
  }
  return { type: 'Adopt', claims, members, reason: `re-forming on the claims of a deleted cluster of this name: members ${members.join(', ')}${leftAlone}` };
}

/** The incarnation whose claims were made last. */
const newestIncarnation = (retained: RetainedClaim[]): string | undefined =>
  [...retained].sort((a, b) => b.createdMs - a.createdMs || byName(a.name, b.name))[0]?.incarnation;

/**
 * No member answers, so etcd cannot say who its members are: the membership status recorded is the word, or,
 * where status recorded none (an earlier version's status, a cluster adopted), the claims that say their
 * member ran on them. Such a member whose pod is gone is started again on its claim, under its own identity
 * (its data holds it), so that a cluster whose every pod went at once (a power loss) re-forms on its data.
 * The peers named only matter to a member without data, which none of these is.
 */
function planWithoutMemberList(s: ClusterState, pods: PodView[], version: string): Action {
  const claims = liveClaims(s);
  if (pods.length === 0 && claims.length === 0 && !s.pods.some((p) => p.nodeLost)) return quorumLost(s, 'every member is gone with its data');
  const stopping = s.pods.find((p) => p.terminating && !p.nodeLost);
  if (stopping) return awaitStopping(s, [stopping.name], `no member answered; waiting for pod ${stopping.name} to stop`);
  const membership = s.recordedMembers.length > 0 ? s.recordedMembers : claims.filter((c) => s.claimMarks.started.includes(c));
  // Never beside a pod of its name, even one stopping on a lost node (it may still run behind the cut).
  const restart = membership.find((m) => claims.includes(m) && !s.pods.some((p) => p.name === m));
  if (restart) {
    return { type: 'CreatePod', member: restart, version, peers: membership, reason: 'no member answers and its pod is gone; restarting it on its data' };
  }
  // A failed pod never runs again (evicted, refused by its kubelet); its member's data is on its claim.
  const failed = pods.find((p) => p.phase === 'Failed' && membership.includes(p.name) && claims.includes(p.name) && !p.nodeLost && !p.dataLost);
  if (failed) return { type: 'DeletePod', member: failed.name, deleteClaim: false, reason: 'no member answers and its pod failed; restarting it on its data' };
  if (s.recordedMembers.length === 0 && !pods.some(mayRun)) return s.pods.some((p) => p.nodeLost) ? nodeLost(s) : membershipUnknown(s, claims);
  if (s.recordedMembers.length > 0) {
    // A recorded member keeps its data on its claim, or in a pod that may still run whose data guard did not find it gone.
    // A pod whose data guard found its volume empty says the claim holds nothing any more.
    const kept = s.recordedMembers.filter((m) => !s.pods.some((p) => p.name === m && p.dataLost)
      && (claims.includes(m) || s.pods.some((p) => p.name === m && p.phase !== 'Failed')));
    const lost = s.recordedMembers.length - kept.length;
    if (kept.length < quorum(s.recordedMembers.length)) return quorumLost(s, `${lost} of ${s.recordedMembers.length} members are gone with their data; a majority is lost`);
  }
  if (!pods.some(mayRun)) return nodeLost(s);
  const running = pods.filter(mayRun).map((p) => p.name);
  if ((s.unheardForMs ?? 0) > s.replaceAfterMs) {
    return {
      type: 'Blocked', cause: 'Unreachable',
      reason: `pods ${running.join(', ')} may run etcd, but none has answered the operator for ${Math.round((s.unheardForMs ?? 0) / 1000)} s: see whether etcd runs `
        + '(kubectl logs) and what stands between the operator and the members (a NetworkPolicy, DNS, TLS: a CA Secret made anew under running members)',
    };
  }
  return { type: 'Wait', awaiting: 'MembersAnswering', members: running, reason: 'no member answered; waiting for etcd' };
}

/** A pod that may still run etcd by itself: not stopping, not failed for good, its data not lost, its node not lost. */
const mayRun = (p: PodView): boolean => !p.terminating && p.phase !== 'Failed' && !p.dataLost && !p.nodeLost;

/**
 * The members that could make a quorum are on lost nodes: dead, or cut off with etcd perhaps still running
 * behind the cut, where they may be a majority. Only their nodes' return, or a person's word that a node is
 * shut down, moves on: a recovery (restorePolicy) forced from the members this side would otherwise be a second
 * cluster beside one that may still take writes.
 */
function nodeLost(s: ClusterState): Action {
  const stranded = s.pods.filter((p) => p.nodeLost);
  const nodes = [...new Set(stranded.map((p) => p.node ?? '?'))].sort();
  const answering = s.health.map((h) => h.name).sort();
  const heard = answering.length > 0 ? `only ${answering.join(', ')} answer${answering.length === 1 ? 's' : ''}` : 'no member answers';
  const then = s.survivorPolicy || s.rebuildFrom ? 'are counted lost with their data, and spec.restorePolicy recovers the cluster' : 'are counted lost with their data';
  return {
    type: 'Blocked', cause: 'NodeLost',
    reason: `${heard}, and pods ${stranded.map((p) => p.name).join(', ')} are on lost nodes ${nodes.join(', ')}: their members resume when the nodes return. `
      + `If a node is shut down for good, say so (kubectl taint node <node> node.kubernetes.io/out-of-service=nodeshutdown:NoExecute): its pods go, and members whose volume only that node holds ${then}; `
      + 'those on volumes other nodes reach restart there. The operator does not decide it: cut off, they may still run as a majority',
  };
}

/**
 * Claims that do not say their member ran: an earlier version's say nothing, and a mark that says it never ran
 * may be stale. Whether each holds a member's data is a person's word.
 */
function membershipUnknown(s: ClusterState, claims: string[]): Action {
  const unmarked = claims.filter((c) => !s.claimMarks.neverRan.includes(c));
  const neverRan = claims.filter((c) => s.claimMarks.neverRan.includes(c));
  const which = [
    ...(unmarked.length > 0 ? [`claims ${unmarked.join(', ')} (made by an earlier operator version) do not say whether a member ran on them`] : []),
    ...(neverRan.length > 0 ? [`claims ${neverRan.join(', ')} say their member never ran on them (a mark that may be stale)`] : []),
  ];
  return {
    type: 'Blocked', cause: 'MembershipUnknown',
    reason: `no member runs, status records no membership, and ${which.join('; ')}: `
      + `mark those that hold a member's data (kubectl annotate pvc <claim> etcd.database.coreos.com/member-started=true) and their members restart on them`,
  };
}

function planMembership(s: ClusterState, pods: PodView[], members: MemberView[], r: Rollout): Action {
  const version = r.newMemberVersion;
  const podOf = (name: string): PodView | undefined => pods.find((p) => p.name === name);
  const voters = votersOf(members);
  const leader = leaderHealth(voters, s.health);

  // 3. Finish a change in flight.
  // A member whose volume came back empty must not rejoin under its ID, having forgotten what it acknowledged:
  // it is removed, and a new member takes its place; if another change is in flight, that one finishes first.
  const inFlight = changeInFlight(s);
  // A stopping pod counts too: the member it leaves behind must not come back on that volume either.
  const emptied = members.find((m) => s.pods.some((p) => p.name === m.name && p.dataLost) && (!inFlight || inFlight.name === m.name));
  // Until it can be removed, the rules below may still bring back others (a member restarted on its claim).
  const removeEmptied = emptied ? removal(s, emptied, 'its volume came back empty: it must not rejoin under its old ID; replacing it', voters, leader) : undefined;
  if (removeEmptied && removeEmptied.type !== 'Wait') return removeEmptied;
  const learner = members.find((m) => m.isLearner);
  if (learner) {
    if (!podOf(learner.name)) return { type: 'CreatePod', member: learner.name, version, reason: 'learner added; starting its pod' };
    const remade = outdatedUnstarted(s, learner);
    if (remade) return remade;
    const answering = answers(s.health, learner.name);
    if (leader && answering && lagBehind(leader, s.health, learner.name) <= s.learnerMaxLag) {
      return { type: 'PromoteLearner', memberId: learner.id, member: learner.name };
    }
    // One that stays silent, or that answers but comes no closer to the leader's log, would hold every other
    // rule (repairs, quorum loss) for ever, so it is removed again, unless the plan without it would only add
    // it again (finding 7).
    if (!answering && silentTooLong(s, learner.name)) {
      const unplaced = podOf(learner.name)?.unschedulable ? keptUnscheduled(s, learner) : undefined;
      return unplaced ?? removal(s, learner, 'learner never answered; removing it', voters, leader);
    }
    if (stalled(s, learner.name)) {
      const why = `learner came no closer to the leader's log for over ${Math.round(s.stalledAfterMs / 1000)} s and holds a repair back; removing it`;
      return keptStalled(s, learner, leader) ?? removal(s, learner, why, voters, leader);
    }
    return { type: 'Wait', awaiting: 'CatchingUp', members: [learner.name], reason: `learner ${learner.name} catching up` };
  }
  const unstarted = voters.find((m) => !m.started);
  if (unstarted) {
    if (!podOf(unstarted.name)) return { type: 'CreatePod', member: unstarted.name, version, reason: 'member added; starting its pod' };
    const remade = outdatedUnstarted(s, unstarted);
    if (remade) return remade;
    // Until it starts no other change is made; one that never starts is removed again (finding 7).
    if (!answers(s.health, unstarted.name) && silentTooLong(s, unstarted.name)) {
      // A removal that must wait for members to answer lets a member whose pod is gone rejoin on its volume
      // meanwhile (no membership change): that is how they come to answer.
      const removing = removal(s, unstarted, 'member added but never started; removing it', voters, leader);
      const rejoining = voters.find((v) => !podOf(v.name) && s.claims.includes(v.name) && !s.pods.some((p) => p.name === v.name));
      return removing.type === 'Wait' && rejoining ? { type: 'CreatePod', member: rejoining.name, version, reason: 'pod gone; rejoining with its data' } : removing;
    }
    return { type: 'Wait', awaiting: 'MembersStarting', members: [unstarted.name], reason: `member ${unstarted.name} starting` };
  }

  // 4. Repairs.
  const orphan = pods.find((p) => !members.some((m) => m.name === p.name));
  if (orphan) return { type: 'DeletePod', member: orphan.name, deleteClaim: false, reason: 'pod is not a member of the cluster', notMember: true, ...(orphan.nodeLost ? { force: true } : {}) };
  // A removed member's pod on a lost node never stops: the kubelet that would stop it does not answer. Out of
  // etcd's member list it can never rejoin (the fence), so the pod is deleted without waiting for the node;
  // should the node come back, its kubelet stops whatever still runs there.
  const abandoned = s.pods.find((p) => p.terminating && p.nodeLost && !members.some((m) => m.name === p.name));
  if (abandoned) return { type: 'DeletePod', member: abandoned.name, deleteClaim: false, force: true, reason: `member removed; its node ${abandoned.node ?? ''} is lost, so its pod is deleted without waiting for the node` };
  // A stopping pod is not gone: it may still run (evicted, or on a node that does not answer). Its member is
  // neither restarted beside it nor counted as lost for good; a silent one is judged by the rules below.
  const stopping = (name: string): boolean => s.pods.some((p) => p.name === name && p.terminating);
  const podless = voters.filter((v) => !podOf(v.name) && !stopping(v.name));
  for (const m of podless) {
    if (s.claims.includes(m.name)) return { type: 'CreatePod', member: m.name, version, reason: 'pod gone; rejoining with its data' };
  }
  const answeringVoters = countAnswering(voters, s.health);
  if (answeringVoters < quorum(voters.length)) {
    const lostForGood = podless.filter((m) => !s.claims.includes(m.name)).length;
    if (voters.length - lostForGood < quorum(voters.length)) {
      return quorumLost(s, `${lostForGood} of ${voters.length} members are gone with their data; a majority is lost`);
    }
    // A restart on its volume needs no quorum: a member silent past the threshold (or whose pod failed) gets one.
    const restartable = (m: MemberView): boolean => {
      const p = podOf(m.name);
      return p !== undefined && !p.nodeLost && !p.dataLost && (p.phase === 'Failed' || (s.silentForMs[m.name] ?? 0) > s.replaceAfterMs);
    };
    const stalled = voters.find((m) => s.claims.includes(m.name) && !answers(s.health, m.name) && restartable(m));
    if (stalled) return { type: 'DeletePod', member: stalled.name, deleteClaim: false, reason: 'quorum lost and it answered nothing past the threshold; restarting it on its data' };
    const why = `quorum lost: ${answeringVoters} of ${voters.length} members answer`;
    const returning = voters.filter((v) => !answers(s.health, v.name) && mayAnswerSoon(s, v.name)).map((v) => v.name);
    if (returning.length > 0) return { type: 'Wait', awaiting: 'MembersAnswering', members: returning, reason: `${why}; waiting for ${returning.join(', ')} to come back` };
    // Once they are gone, the lost majority is judged again (a rebuild, say).
    const leaving = s.pods.find((p) => p.terminating && !p.nodeLost);
    if (leaving) return awaitStopping(s, [leaving.name], `${why}; waiting for pod ${leaving.name} to stop`);
    const silent = voters.filter((v) => !answers(s.health, v.name)).map((v) => v.name);
    if (silent.every((n) => s.pods.some((p) => p.name === n && p.nodeLost))) return nodeLost(s);
    return {
      type: 'Blocked', cause: 'TooFewAnswering',
      reason: `${why}, and ${silent.join(', ')} will not answer by themselves (failed, silent past the threshold, data or node lost): bring them back, or set spec.restorePolicy to recover`,
    };
  }
  const gone = podless[0];
  if (gone) return removal(s, gone, 'pod gone and no volume; replacing the member', voters, leader);
  // A member silent on a lost node (dead, or cut off with the member perhaps still running behind the cut) is
  // removed from etcd first, which fences it for good; its pod is deleted next, and a new member takes its
  // place on a live node. Its volume stays on the lost node, kept aside as any removed member's claim.
  const lostPod = (m: MemberView): PodView | undefined => s.pods.find((p) => p.name === m.name && p.nodeLost);
  const stranded = voters.find((m) => lostPod(m) && !answers(s.health, m.name) && (s.strandedForMs[m.name] ?? 0) > s.replaceOnNodeLossAfterMs);
  if (stranded) {
    const reason = `its node ${lostPod(stranded)?.node ?? ''} is lost and it answered nothing for ${Math.round((s.strandedForMs[stranded.name] ?? 0) / 1000)} s since; `
      + 'removing it (it can never rejoin), then replacing it on a live node';
    return removal(s, stranded, reason, voters, leader);
  }
  const corrupt = s.alarms.filter((a) => a.alarm === 'CORRUPT');
  if (corrupt.length > 0) return planCorruption(s, members, voters, leader, corrupt);
  const noSpace = s.alarms.filter((a) => a.alarm === 'NOSPACE');
  const recovery = noSpace.length > 0 ? planNoSpace(s, voters, noSpace, leader) : undefined;
  if (recovery) return recovery;
  const failed = (m: MemberView): boolean => podOf(m.name)?.phase === 'Failed';
  // A member on a volume on a lost node is the node-loss rule's: a restart would wait for a kubelet that does not
  // answer. One without a volume is replaced as anywhere else, by whichever threshold comes first.
  const broken = voters.find((m) => !(lostPod(m) && s.claims.includes(m.name)) && (failed(m) || (s.silentForMs[m.name] ?? 0) > s.replaceAfterMs));
  if (broken) {
    const why = failed(broken) ? 'pod failed' : `answered nothing for ${Math.round((s.silentForMs[broken.name] ?? 0) / 1000)} s`;
    // A member with a volume is only ever restarted on its data: replacing it would throw its data away. One
    // whose volume came back empty has none to restart on (and must not rejoin under its ID): it is replaced.
    const emptiedVolume = s.pods.some((p) => p.name === broken.name && p.dataLost);
    // One whose data its user cannot use (a volume that ignored fsGroup) would fail the same way at every restart.
    const unusable = s.pods.some((p) => p.name === broken.name && p.dataNotOurs);
    if (s.claims.includes(broken.name) && !emptiedVolume && !unusable) return { type: 'DeletePod', member: broken.name, deleteClaim: false, reason: `${why}; restarting it on its data` };
    if (unusable) return removal(s, broken, `${why}: its user cannot use its data on this volume; replacing it with a member on a new volume`, voters, leader);
    return removal(s, broken, `${why}; replacing it`, voters, leader);
  }
  // A claim whose member etcd no longer lists (dropped by a recovery from a survivor, or removed by an
  // operator stopped before it marked the claim) is set aside: nothing may restart it any more.
  const dropped = droppedClaim(s, members.map((m) => m.name));
  if (dropped) return setAsideDropped(dropped);
  const expired = expiredClaim(s);
  if (expired) return expired;

  // 5. Readiness gate.
  // A pod on a lost node may still say Ready: its kubelet, which would say otherwise, does not answer. One that
  // answers there (its kubelet cut off from the API server) stays so until the node returns, stopping or not.
  const answeringOnLostNode = s.pods.find((p) => p.nodeLost && voters.some((v) => v.name === p.name) && answers(s.health, p.name));
  if (answeringOnLostNode) {
    const { name, node } = answeringOnLostNode;
    return {
      type: 'Blocked', cause: 'NodeLost',
      reason: `member ${name} answers but its node ${node ?? ''} is lost (NotReady): no member is added, removed or rolled until the node reports again; bring it back, or drain it (kubectl drain ${node ?? '<node>'}) to move the member`,
    };
  }
  const stopped = voters.find((m) => !podOf(m.name));
  if (stopped) return awaitStopping(s, [stopped.name], `the pod of member ${stopped.name} is stopping`);
  const unready = pods.find((p) => !p.ready || p.nodeLost);
  if (unready) return { type: 'Wait', awaiting: 'MemberReady', members: [unready.name], reason: `member ${unready.name} is not ready` };

  // 6. Scale, one member at a time.
  if (voters.length < s.desiredSize) return addMember(s, version, `scaling up to ${s.desiredSize}`);
  // A member on a node being drained moves: its replacement joins elsewhere first (the drained node takes no
  // new pod), and the scale-down below then removes it. The PodDisruptionBudget refuses its eviction meanwhile.
  const draining = (m: MemberView): boolean => podOf(m.name)?.nodeDraining === true;
  const leaving = voters.find(draining);
  if (leaving && voters.length === s.desiredSize) {
    return addMember(s, version, `node ${podOf(leaving.name)?.node ?? ''} is being drained: adding the replacement of ${leaving.name} elsewhere first`);
  }
  const stale = voters.filter((m) => r.stale.includes(m.name));
  if (voters.length > s.desiredSize) {
    // Members on a drained node leave first, then old versions, then old settings: this finishes the
    // replacement of a member, whose successor must never be the one removed (names alone would pick it half
    // the time, and the roll would add and remove successors forever). The leader goes last.
    const age = (m: MemberView): number => (draining(m) ? -2 : stale.includes(m) ? 0 : r.reconfigure.includes(m.name) ? 2 : 4);
    const rank = (m: MemberView): number => age(m) + (m.name === leader?.name ? 1 : 0);
    // Among equals, one from the most crowded node, then zone, goes: the end of a move that spread the members
    // takes one off a node holding a quorum of them, not off a node of two, and no scale-down leaves a quorum in
    // one place where it need not.
    const [onNode, inZone] = [sharing(voters, pods, 'node'), sharing(voters, pods, 'zone')];
    const crowding = (a: MemberView, b: MemberView): number => onNode(b) - onNode(a) || inZone(b) - inZone(a);
    const candidate = [...voters].sort((a, b) => rank(a) - rank(b) || crowding(a, b) || byName(a.name, b.name))[0];
    if (candidate) return removal(s, candidate, `scaling down to ${s.desiredSize}`, voters, leader);
  }

  // 7. Labels and annotations first, one member's pod a pass (no restart); then roll to the target version, settings and pod template.
  const relabel = pods.find((p) => r.relabel.includes(p.name));
  if (relabel) return patchMetadata(s, relabel);
  if (stale.length > 0 && !r.verdict.allowed) return { type: 'UpgradeRefused', reason: r.verdict.message };
  const downgrade = stale.length > 0 && r.verdict.allowed && r.verdict.downgradeTo ? downgradeStep(s, voters, r.verdict.downgradeTo) : unwantedDowngrade(s, r);
  if (downgrade) return downgrade;
  const outdated = stale.length > 0 ? stale : voters.filter((m) => r.reconfigure.includes(m.name));
  if (outdated.length === 0) return planSpread(s, voters, pods, version) ?? planDefragmentation(s, voters) ?? settled(s);
  // Who is caught up is judged against the leader: none agreed on yet, the roll waits for one.
  if (!leader) return { type: 'Wait', awaiting: 'LeaderElection', members: voters.map((v) => v.name), reason: 'waiting for a leader the members agree on before the next upgrade step' };
  const lagging = voters.find((m) => lagBehind(leader, s.health, m.name) > s.learnerMaxLag);
  if (lagging && stalled(s, lagging.name)) {
    // A voter is never removed for lagging: it counts towards the quorum, and its data is whole.
    return catchUpStalled(s, lagging, leader, `member ${lagging.name}`, 'the roll waits for it (a voter is not removed for lagging)');
  }
  if (lagging) return { type: 'Wait', awaiting: 'CatchingUp', members: [lagging.name], reason: `${lagging.name} is catching up before the next upgrade step` };
  const next = outdated.find((m) => m.name !== leader.name) ?? outdated[0];
  if (!next) return { type: 'Steady' };
  const step = stale.length > 0 ? `${r.verdict.allowed && r.verdict.downgradeTo ? 'downgrading' : 'upgrading'} ${next.name} to ${s.targetVersion}`
    : podOf(next.name)?.config !== s.targetConfig ? `applying new settings to ${next.name}` : `applying the changed spec.pod to ${next.name}`;
  if (next.name === leader.name) {
    const successor = voters.find((v) => v.name !== next.name && !outdated.includes(v) && answers(s.health, v.name));
    if (successor) return { type: 'MoveLeader', toMemberId: successor.id, to: successor.name, reason: `before ${step}` };
  }
  if (s.claims.includes(next.name) && !ownerChanges(s, podOf(next.name))) return { type: 'DeletePod', member: next.name, deleteClaim: false, reason: `${step}: restarting it on its data` };
  const byOwner = s.claims.includes(next.name) ? ' (its data was written as another user, which not every volume lets the new one read: a new member on a new volume takes its place)' : '';
  return addMember(s, version, `${step}: adding its replacement first${byOwner}`);
}

/**
 * Whether a roll changes the user etcd runs as: root members of earlier versions moving onto "restricted" pods.
 * fsGroup would give their data to the new user on most volumes, but not on hostPath (the local-path provisioner's
 * default in many clusters) nor on some NFS drivers, where the member would never start again: such a member is
 * replaced, its successor joining on a new volume first, not restarted on its own.
 */
const ownerChanges = (s: ClusterState, p: PodView | undefined): boolean =>
  p?.runAsUser !== undefined && s.targetRunAsUser !== undefined && p.runAsUser !== s.targetRunAsUser;

/** Brings a pod's labels and annotations to the spec's, and records the spec's pod template on a pod of an earlier version judged on it. */
function patchMetadata(s: ClusterState, p: PodView): Action {
  const record = unrecordedTarget(s, p);
  const what = [
    ...(p.metadata !== s.targetMetadata ? ['applying the spec.pod labels and annotations'] : []),
    ...(record ? ['recording the pod template it is on (made by an earlier operator version)'] : []),
  ];
  return { type: 'PatchPodMetadata', member: p.name, reason: `${what.join('; ')}: no restart`, ...(record ? { recordTemplate: s.targetTemplate } : {}) };
}

/**
 * A majority gone for good: recovered from a survivor's data if the policy allows and one answers, else
 * rebuilt from the restore policy's backup if there is one, else reported, touching nothing.
 */
function quorumLost(s: ClusterState, reason: string): Action {
  // The furthest member may be one that is slow to answer: "auto" hears every member with a volume first,
  // or gives it up once it has answered nothing for the replacement threshold (finding 8).
  const unheard = s.survivorPolicy === 'auto' ? (s.members ?? []).filter((m) => s.claims.includes(m.name) && !answers(s.health, m.name) && !silentTooLong(s, m.name)) : [];
  // A pod stopping is not timed as silent, and its member is heard only once it is gone and restarts on its
  // volume: it is waited for as a pod stopping, and named for a person if it never stops.
  const leaving = unheard.filter((m) => s.pods.some((p) => p.name === m.name && p.terminating && !p.nodeLost)).map((m) => m.name);
  if (leaving.length > 0) return awaitStopping(s, leaving, `${reason}; before choosing a survivor, waiting for the pods of ${leaving.join(', ')} to stop, and their members to restart on their volumes`);
  if (unheard.length > 0) return { type: 'Wait', awaiting: 'MembersAnswering', members: unheard.map((m) => m.name), reason: `${reason}; before choosing a survivor, waiting for ${unheard.map((m) => m.name).join(', ')} (on a volume) to answer` };
  const survivor = s.survivorPolicy ? pickSurvivor(s, s.survivorPolicy) : undefined;
  // The survivor is restarted alone on the version new members get: one whose --force-new-cluster can drop
  // writes its database holds is never used for it.
  const version = rollout(s).newMemberVersion;
  const unsafe = survivor && !forceNewClusterKeepsData(version)
    ? `; a recovery from a survivor needs etcd ${Object.values(FORCE_NEW_CLUSTER_FIXED).join(' or ')} or later: in ${version}, --force-new-cluster `
      + 'can drop writes the survivor\'s database holds (etcd issue 20009); set spec.version to such a patch release and the survivor is restarted on it'
    : '';
  if (survivor && !unsafe) return { type: 'StartSurvivorRecovery', survivor: survivor.name, revision: survivor.revision, reason };
  if (s.rebuildFrom) return { type: 'StartRebuild', from: s.rebuildFrom, reason };
  const unavailable = s.survivorPolicy && s.survivorPolicy !== 'auto' && !survivor ? `; survivor ${s.survivorPolicy} is not available` : '';
  return { type: 'QuorumLost', reason: `${reason}${unavailable}${unsafe}${s.rebuildRefused ? `; ${s.rebuildRefused}` : ''}` };
}

/** A member that still has its pod and its volume and answers: the named one, or the one furthest along. */
function pickSurvivor(s: ClusterState, policy: string): MemberHealth | undefined {
  const eligible = s.health.filter((h) => s.claims.includes(h.name) && s.pods.some((p) => p.name === h.name && !p.terminating));
  if (policy !== 'auto') return eligible.find((h) => h.name === policy);
  return [...eligible].sort((a, b) => b.raftIndex - a.raftIndex || byName(a.name, b.name))[0];
}

/**
 * The survivor restarts alone with --force-new-cluster (etcd drops every other member), then once it leads
 * its one-member cluster, restarts without the flag, which must never stay set; then the normal rules
 * scale it back out. Each step waits for the previous pod to be gone.
 */
function planSurvivorRecovery(s: ClusterState, rec: { survivor: string; forced: boolean }, version: string): Action {
  const pod = s.pods.find((p) => p.name === rec.survivor);
  if (pod?.terminating && !pod.nodeLost) return awaitStopping(s, [rec.survivor], `survivor ${rec.survivor}: waiting for its pod to stop`);
  if (!pod) {
    return rec.forced
      ? { type: 'CreatePod', member: rec.survivor, version, reason: 'survivor restarting without --force-new-cluster' }
      : { type: 'CreatePod', member: rec.survivor, version, forceNewCluster: true, reason: 'survivor starting alone with --force-new-cluster' };
  }
  // A failed pod never runs again (evicted, refused by its kubelet): the survivor restarts on its data, as it was.
  if (pod.phase === 'Failed' && !pod.dataLost && !pod.nodeLost && s.claims.includes(rec.survivor)) {
    return { type: 'DeletePod', member: rec.survivor, deleteClaim: false, reason: `survivor ${rec.survivor}: its pod failed; restarting it on its data` };
  }
  if (!mayRun(pod)) return survivorLost(rec.survivor, pod);
  const leads = s.health.some((h) => h.name === rec.survivor && h.isLeader);
  const alone = s.members?.length === 1 && s.members[0]?.name === rec.survivor;
  if (!(leads && alone && pod.ready)) return { type: 'Wait', awaiting: 'MembersStarting', members: [rec.survivor], reason: `survivor ${rec.survivor} starting as a one-member cluster` };
  // --force-new-cluster dropped every other member without a removal: their claims are set aside as removed
  // members' are, before anything else, so that no adoption restarts them on data naming the old membership.
  const dropped = droppedClaim(s, [rec.survivor]);
  if (dropped) return setAsideDropped(dropped);
  if (pod.forced) return { type: 'RestartSurvivor', survivor: rec.survivor };
  return { type: 'CompleteSurvivorRecovery', survivor: rec.survivor };
}

/** The survivor's pod cannot run: its data is gone, its node is lost, or it failed without its claim. */
function survivorLost(survivor: string, pod: PodView): Action {
  const why = pod.dataLost ? 'its data is gone' : pod.nodeLost ? `its node ${pod.node ?? ''} is lost` : 'its pod failed and its claim is gone';
  return {
    type: 'Blocked', cause: 'SurvivorLost',
    reason: `recovering from survivor ${survivor}, whose pod ${pod.name} cannot run: ${why}. Bring the node back if it can come back; otherwise end this recovery `
      + `(kubectl patch etcdcluster <name> --subresource=status --type=json -p '[{"op":"remove","path":"/status/survivorRecovery"}]') so that another survivor is chosen, or restore from a backup`,
  };
}

/**
 * A CORRUPT alarm says some replica differs, not reliably which: etcd's periodic check runs on the leader and
 * names the followers that differ from it, so a corrupt leader gets its healthy followers named. The
 * members' own HashKV at one revision decides: the members outside a group that agrees and is a quorum of
 * the voters are removed, one at a time (followers of a corrupt leader keep their place). Without such a
 * group nothing is removed and nothing disarmed: a person decides which data is right.
 *
 * A voter whose HashKV cannot be had is waited for while it may answer; silent past its threshold, it would be
 * waited for for ever (issue 32), so it is removed and replaced like one whose data differs, once the members
 * that agree are a quorum: they hold what was acknowledged. It is not restarted on its data, as a silent member
 * is elsewhere: that data is what is in question, and etcd's initial corruption check would refuse it start
 * after start if it differs. etcd allows the removal: while CORRUPT is raised its corrupt applier
 * (server/etcdserver/apply/corrupt.go; 3.5: server/etcdserver/corrupt.go) refuses only Put, Range,
 * DeleteRange, Txn, Compaction, LeaseGrant and LeaseRevoke, and a member removal is a raft configuration change,
 * applied by EtcdServer.applyConfChange outside that applier (checked only by the strict reconfiguration check).
 */
function planCorruption(s: ClusterState, members: MemberView[], voters: MemberView[], leader: MemberHealth | undefined, corrupt: AlarmView[]): Action {
  const check = s.corruptionCheck;
  const at = check ? ` at revision ${check.revision}` : '';
  const hashOf = (name: string): number | undefined => check?.hashes[name];
  const hashed = voters.filter((v) => hashOf(v.name) !== undefined);
  const agreed = hashed.map((v) => hashOf(v.name)).find((h) => hashed.filter((v) => hashOf(v.name) === h).length >= quorum(voters.length));
  if (agreed === undefined) {
    const why = hashed.length < quorum(voters.length) ? `only ${hashed.length} of ${voters.length} members answered HashKV` : `no ${quorum(voters.length)} of ${voters.length} members agree on their data${at}`;
    return { type: 'CorruptionUndecided', reason: `etcd raised CORRUPT and ${why}; compare their data (etcdctl endpoint hashkv) and remove the wrong ones` };
  }
  const odd = members.find((m) => hashOf(m.name) !== undefined && hashOf(m.name) !== agreed);
  if (odd) return removal(s, odd, `CORRUPT: its data differs from that of a majority${at} (HashKV); replacing it`, voters, leader);
  const unhashed = voters.filter((v) => hashOf(v.name) === undefined);
  const silent = unhashed.find((v) => silentTooLong(s, v.name));
  if (silent) return removal(s, silent, `CORRUPT: the members that answered agree${at}, and it answered nothing past the threshold, so its data cannot be checked; replacing it`, voters, leader);
  // A stopping pod will not answer, and is not timed as silent: once it is gone its member rejoins on its claim
  // or is replaced; stuck stopping, it is named for a person.
  const leaving = unhashed.find((v) => s.pods.some((p) => p.name === v.name && p.terminating && !p.nodeLost));
  if (leaving) return awaitStopping(s, [leaving.name], `CORRUPT: the members that answered agree${at}; waiting for the pod of ${leaving.name} to stop`);
  if (unhashed.length > 0) return { type: 'Wait', awaiting: 'MembersAnswering', members: unhashed.map((v) => v.name), reason: `CORRUPT: the members that answered agree${at}; waiting for the others' HashKV` };
  // etcd names member 0 when it cannot tell who differs (3.5's periodic check always does); such an alarm is
  // for a person to clear, even once the members that differed are gone.
  if (corrupt.some(namesNoMember)) return { type: 'CorruptionUndecided', reason: `every member agrees${at} now, but etcd raised CORRUPT naming no member: check the data and disarm it (etcdctl alarm disarm); a member removed for its data is replaced after that` };
  return { type: 'DisarmAlarms', alarms: corrupt, reason: `every member's data agrees${at}` };
}

/**
 * Removes what is left of the lost cluster before the rebuild's bootstrap: its pods are deleted, and its claims
 * set aside like any removed member's, kept for the grace period and never restarted: a surviving minority may
 * hold writes newer than the backup, which a person may still want.
 */
function clearForRebuild(s: ClusterState, pods: PodView[]): Action {
  const pod = pods[0];
  if (pod) return { type: 'DeletePod', member: pod.name, deleteClaim: false, reason: 'rebuilding from backup: removing what is left of the lost cluster' };
  const claim = s.claims.find((c) => !s.claimMarks.setAside.includes(c));
  if (claim) return { type: 'SetClaimAside', member: claim, reason: 'rebuilding from backup: the lost cluster\'s claim is kept for the grace period (it may hold writes newer than the backup), never restarted' };
  return { type: 'ClearedForRebuild' };
}

/** How many voters run where a member runs (its node or its zone), itself included; 0 where that is not known. */
function sharing(voters: MemberView[], pods: PodView[], place: 'node' | 'zone'): (m: MemberView) => number {
  const placeOf = (name: string): string | undefined => pods.find((p) => p.name === name)?.[place] || undefined;
  return (m) => {
    const at = placeOf(m.name);
    return at === undefined ? 0 : voters.filter((v) => placeOf(v.name) === at).length;
  };
}

/** Voters whose pod shares its node with another voter's. */
function crowdedMembers(voters: MemberView[], pods: PodView[]): string[] {
  const onNode = sharing(voters, pods, 'node');
  return voters.filter((v) => onNode(v) > 1).map((v) => v.name);
}

/**
 * Members that share a node while a node with none is free (a lost zone came back, nodes were added): one
 * member is added, which the spread constraints place on the free node, and the scale-down then removes one
 * of those sharing. One member at a time, only at full size with every member ready.
 */
function planSpread(s: ClusterState, voters: MemberView[], pods: PodView[], version: string): Action | undefined {
  const crowded = crowdedMembers(voters, pods);
  if (!s.spreadTo?.length || crowded.length === 0 || voters.length !== s.desiredSize || !roomForOneMore(s)) return undefined;
  return {
    type: 'AddMember', learner: s.supportsLearners, version, spreading: true,
    reason: `spreading the members: ${crowded.join(', ')} share a node while ${s.spreadTo.join(', ')} has none; adding a member there first`,
  };
}

/** One more member can be placed: there is no hard one-member-per-node rule, or a node that can take a member holds no pod of the cluster. */
const roomForOneMore = (s: ClusterState): boolean => !s.placeableNodes || s.placeableNodes.some((n) => !s.pods.some((p) => p.node === n));

/**
 * Adds a member where the hard one-member-per-node rule leaves it a node. Without one, a member added would
 * never be scheduled, and removed and added again for ever, a claim each time (issue 32, findings 13 and 6):
 * the plan waits for a pod stopping on a node the rule could use, or says that nodes are missing.
 */
function addMember(s: ClusterState, version: string, reason: string): Action {
  const placeable = s.placeableNodes;
  if (!placeable || roomForOneMore(s)) return { type: 'AddMember', learner: s.supportsLearners, version, reason };
  const podsOn = (node: string): PodView[] => s.pods.filter((p) => p.node === node);
  const freeing = placeable.find((n) => podsOn(n).every((p) => p.terminating && !p.nodeLost));
  if (freeing) return awaitStopping(s, podsOn(freeing).map((p) => p.name), `${reason}: waiting for node ${freeing} to be free`);
  const members = votersOf(s.members).length;
  return {
    type: 'Blocked', cause: 'TooFewNodes',
    reason: `${reason}, but spec.pod.antiAffinity places one member per node, and each node that can take one (${placeable.join(', ') || 'none'}) holds one: `
      + `the cluster stays at ${members} member(s). Add a node (Ready, schedulable, matching spec.pod.nodeSelector), lower spec.size, or set antiAffinity to false`,
  };
}

/** Followers first, the leader last: the order of work that pauses a member. */
function leaderLast(voters: MemberView[], health: readonly MemberHealth[]): MemberView[] {
  const leads = (m: MemberView): number => (health.find((h) => h.name === m.name)?.isLeader ? 1 : 0);
  return [...voters].sort((a, b) => leads(a) - leads(b) || byName(a.name, b.name));
}

/** The next step of a NOSPACE recovery, or undefined when the data fills the quota even so (nothing to do). */
function planNoSpace(s: ClusterState, voters: MemberView[], alarms: AlarmView[], leader: MemberHealth | undefined): Action | undefined {
  if (!leader) return { type: 'Wait', awaiting: 'LeaderElection', members: voters.map((v) => v.name), reason: 'NOSPACE: waiting for a leader' };
  const done = s.noSpaceRecovery ?? {};
  if (done.compactedRevision === undefined) {
    const sinceLast = s.noSpaceDisarmedForMs;
    if (sinceLast === undefined || sinceLast >= NOSPACE_RECOVERY_INTERVAL_MS) return { type: 'Compact', revision: leader.revision, reason: 'NOSPACE: compacting the key history' };
    return {
      type: 'Wait', awaiting: 'NoSpaceInterval', members: [],
      reason: `NOSPACE raised again ${Math.round(sinceLast / 1000)} s after the last recovery (a client writes more than the room it left): the next starts in ${Math.ceil((NOSPACE_RECOVERY_INTERVAL_MS - sinceLast) / 1000)} s`,
    };
  }
  const next = leaderLast(voters, s.health).find((m) => answers(s.health, m.name) && !(done.defragmented ?? []).includes(m.name));
  if (next) return { type: 'Defragment', member: next.name, reason: 'NOSPACE: returning the compacted space' };
  if (!filling(s)) {
    // Disarming member 0 would disarm every alarm, CORRUPT included: one naming no member is a person's to disarm.
    const named = alarms.filter((a) => !namesNoMember(a));
    if (named.length === 0) return { type: 'Blocked', cause: 'AlarmNamesNoMember', reason: `NOSPACE: space recovered, but etcd's alarm names no member (${alarms.map((a) => a.memberId || '""').join(', ')}): check it and disarm it (etcdctl alarm disarm)` };
    return { type: 'DisarmAlarms', alarms: named, reason: 'NOSPACE: space recovered' };
  }
  // Past its quota etcd takes only deletes (a person's, a lease's expiry): a revision newer than the compaction is
  // history that a compaction frees now. Without this the recovery, once done, would never look again.
  if (leader.revision > done.compactedRevision) return { type: 'Compact', revision: leader.revision, reason: 'NOSPACE: compacting the keys deleted since' };
  return undefined;
}

/** A member whose database fills the quota still (95 %, as NOSPACE leaves it), if one does. */
function filling(s: ClusterState): MemberHealth | undefined {
  return s.health.find((h) => h.dbSize >= s.quotaBackendBytes * 0.95);
}

/**
 * Nothing left to do: Steady, unless NOSPACE stays raised over live data that fills the quota (its recovery done,
 * nothing deleted since). Then only a person can free space, and the cluster takes no writes: not steady.
 */
function settled(s: ClusterState): Action {
  const full = s.alarms.some((a) => a.alarm === 'NOSPACE') ? filling(s) : undefined;
  if (!full) return { type: 'Steady' };
  return {
    type: 'Blocked', cause: 'QuotaFull',
    reason: `etcd refuses writes (NOSPACE): member ${full.name}'s database is ${full.dbSize} bytes of the ${s.quotaBackendBytes}-byte quota after compacting and defragmenting; `
      + 'delete keys (etcd takes deletes past its quota; the operator then compacts and defragments again), or raise spec.quotaBackendBytes',
  };
}

/** Defragments, when configured, one member whose database is mostly unused space: followers first. */
function planDefragmentation(s: ClusterState, voters: MemberView[]): Action | undefined {
  const policy = s.defragmentation;
  if (!policy) return undefined;
  const wasteful = (m: MemberView): boolean => {
    const h = s.health.find((x) => x.name === m.name);
    return !!h && h.dbSize > 0 && h.dbSize >= (policy.minDbSizeBytes ?? 0) && (h.dbSize - h.dbSizeInUse) * 100 >= policy.unusedPercent * h.dbSize;
  };
  const next = leaderLast(voters, s.health).find(wasteful);
  return next ? { type: 'Defragment', member: next.name, reason: `more than ${policy.unusedPercent}% of its database is unused` } : undefined;
}

/**
 * Removes a member, after moving leadership away from it, if the members that answer without it are a quorum
 * both of the members left and of the size asked for: a repair never leaves fewer answering voters than the
 * cluster needs at its full size.
 */
function removal(s: ClusterState, m: MemberView, reason: string, voters: MemberView[], leader: MemberHealth | undefined): Action {
  const { answering, needed } = afterRemoval(s, m.name);
  // A learner casts no vote: removing it leaves the voters as they are.
  if (answering < needed && !m.isLearner) {
    const why = `removing ${m.name} would leave ${answering} answering voters, fewer than the ${needed} needed`;
    const coming = votersOf(s.members).filter((v) => v.name !== m.name && !answers(s.health, v.name) && mayAnswerSoon(s, v.name)).map((v) => v.name);
    if (coming.length > 0) return { type: 'Wait', awaiting: 'MembersAnswering', members: coming, reason: why };
    const left = votersOf(s.members).length - 1;
    const smaller = answering >= quorum(left) ? `, or lower spec.size to at most ${2 * answering - 1} to repair it with the members that answer` : '';
    return { type: 'Blocked', cause: 'TooFewAnswering', reason: `${why} (${reason}), and the members that do not answer will not by themselves: bring them back${smaller}` };
  }
  if (leader?.name === m.name) {
    const successor = voters.find((v) => v.name !== m.name && answers(s.health, v.name));
    if (successor) return { type: 'MoveLeader', toMemberId: successor.id, to: successor.name, reason: `before removing ${m.name}` };
  }
  return { type: 'RemoveMember', memberId: m.id, member: m.name, reason };
}

/** A claim of the cluster's, not set aside, whose member is not among `members` (etcd's member list). */
const droppedClaim = (s: ClusterState, members: string[]): string | undefined => liveClaims(s).find((c) => !members.includes(c));

const setAsideDropped = (member: string): Action =>
  ({ type: 'SetClaimAside', member, reason: 'etcd no longer lists its member: the claim is kept for the grace period, never restarted' });

/**
 * A claim of no member past the grace period, deleted: one of the cluster's set aside (its member removed), or
 * one a deleted cluster of this name left whose member never ran.
 */
function expiredClaim(s: ClusterState): Action | undefined {
  const past = (name: string): boolean => (s.unclaimedForMs[name] ?? 0) > s.claimGraceMs && !s.members?.some((m) => m.name === name) && !s.pods.some((p) => p.name === name);
  const setAside = s.claimMarks.setAside.find(past);
  if (setAside) return { type: 'DeleteClaim', member: setAside, reason: `claim of no member for ${Math.round(s.claimGraceMs / 1000)} s` };
  // A claim a deleted cluster left is never deleted here, "never ran" mark or not: the mark can be stale (see
  // leftClaimsCondition), and the claim may hold acknowledged writes.
  return undefined;
}

/** A rebuild from backup under way, still removing what is left of the lost cluster. */
const clearingForRebuild = (s: ClusterState): boolean => s.rebuild !== undefined && !s.rebuild.cleared;

/** The cluster's claims not set aside: those of members, or that may become members'. */
const liveClaims = (s: ClusterState): string[] => s.claims.filter((c) => !s.claimMarks.setAside.includes(c));

/** A member that does not answer yet may by itself: its pod may run and has not been silent past the threshold, or it is restarted on its claim. */
const mayAnswerSoon = (s: ClusterState, name: string): boolean =>
  s.pods.some((p) => p.name === name && mayRun(p) && (s.silentForMs[name] ?? 0) <= s.replaceAfterMs)
  // A node back within the node-loss threshold (a reboot) brings its member back in place.
  || s.pods.some((p) => p.name === name && p.nodeLost && !p.terminating && (s.strandedForMs[name] ?? 0) <= s.replaceOnNodeLossAfterMs)
  || (s.claims.includes(name) && !s.pods.some((p) => p.name === name));

/** Silent past its threshold: the member's own, or, with its pod on a lost node, the node-loss one. */
const silentTooLong = (s: ClusterState, name: string): boolean =>
  (s.silentForMs[name] ?? 0) > s.replaceAfterMs || (s.strandedForMs[name] ?? 0) > s.replaceOnNodeLossAfterMs;

/** The voters left answering without `member`, and how many a removal needs: a quorum of the rest and of the desired size. */
function afterRemoval(s: ClusterState, member: string): { answering: number; needed: number } {
  const left = votersOf(s.members).filter((v) => v.name !== member);
  return { answering: countAnswering(left, s.health), needed: Math.max(quorum(left.length), quorum(s.desiredSize)) };
}

/** etcd names member 0 in a CORRUPT alarm when no majority of hashes agrees. */
const namesNoMember = (a: AlarmView): boolean => a.memberId === '0' || a.memberId === '';

/** The membership change under way: a learner not yet promoted, else a member added that has not started. */
const changeInFlight = (s: ClusterState): MemberView | undefined => s.members?.find((m) => m.isLearner) ?? s.members?.find((m) => !m.started);

/**
 * What the planner must never do, whatever it observes: each holds of every state and the action planned for
 * it (checked over generated states by the property tests).
 */
export const INVARIANTS: Record<string, (s: ClusterState, a: Action) => boolean> = {
  'never bootstrap a cluster that owns a pod or a claim (other than one set aside), or that status says came up': (s, a) =>
    a.type !== 'Bootstrap' || (s.pods.length === 0 && liveClaims(s).length === 0 && !s.bootstrapped),
  'never bootstrap beside claims a deleted cluster of the same name left that may hold data': (s, a) =>
    a.type !== 'Bootstrap' || s.retained.every((c) => c.neverRan),
  'resume only a bootstrap that every pod, live claim and listed member belongs to': (s, a) =>
    a.type !== 'ResumeBootstrap' || onlyBootstrapMembers(s, a.initialMembers),
  'adopt only before a bootstrap, with no pod or claim of its own (other than one set aside), and restart no removed member': (s, a) =>
    a.type !== 'Adopt' || (!s.bootstrapped && s.pods.length === 0 && liveClaims(s).length === 0
      && a.members.every((m) => s.retained.some((c) => c.name === m && !c.removed))),
  'adopt one incarnation, the newest, and never a claim whose member never ran': (s, a) => {
    if (a.type !== 'Adopt') return true;
    const adopted = s.retained.filter((c) => a.claims.includes(c.name));
    const incarnation = adopted[0]?.incarnation;
    return adopted.every((c) => c.incarnation === incarnation && !c.neverRan)
      && s.retained.every((c) => c.incarnation === incarnation || c.neverRan || c.createdMs < Math.min(...adopted.map((x) => x.createdMs)));
  },
  'never a membership change while another is in flight, other than removing the one in flight': (s, a) => {
    const inFlight = changeInFlight(s);
    if (!inFlight) return true;
    return a.type !== 'AddMember' && (a.type !== 'RemoveMember' || a.member === inFlight.name);
  },
  'a removal of a voter leaves answering voters for a quorum of the rest and of the desired size': (s, a) => {
    if (a.type !== 'RemoveMember' || s.members?.some((m) => m.name === a.member && m.isLearner)) return true;
    const { answering, needed } = afterRemoval(s, a.member);
    return answering >= needed;
  },
  'set aside only the claim of a member etcd does not list, in a rebuild one of the lost cluster, or before a bootstrap one that says its member never ran': (s, a) =>
    a.type !== 'SetClaimAside' || clearingForRebuild(s) || (s.members !== undefined && !s.members.some((m) => m.name === a.member))
      || (!s.bootstrapped && s.pods.length === 0 && s.claimMarks.neverRan.includes(a.member)),
  'never delete the claim of a listed member': (s, a) =>
    !((a.type === 'DeleteClaim' || (a.type === 'DeletePod' && a.deleteClaim)) && s.members?.some((m) => m.name === a.member) && !s.rebuild),
  'a claim that may hold data is deleted only after the grace period': (s, a) => {
    const claim = a.type === 'DeleteClaim' || (a.type === 'DeletePod' && a.deleteClaim) ? a.member : undefined;
    return claim === undefined || (s.unclaimedForMs[claim] ?? 0) > s.claimGraceMs;
  },
  'never bootstrap more members than the hard one-member-per-node rule has nodes for': (s, a) =>
    a.type !== 'Bootstrap' || !s.placeableNodes || s.placeableNodes.length >= a.size,
  'never add a member the hard one-member-per-node rule has no free node for': (s, a) =>
    a.type !== 'AddMember' || roomForOneMore(s),
  'never disarm an alarm that names no member': (_s, a) =>
    a.type !== 'DisarmAlarms' || !a.alarms.some(namesNoMember),
  // A rebuild first clears what is left of the lost cluster: that is no bootstrap.
  'during a bootstrap, delete only a pod whose etcd never ran, before any member started, or a failed one whose data is on its claim': (s, a) =>
    a.type !== 'DeletePod' || s.bootstrapped || clearingForRebuild(s) || s.pods.every((p) => !p.bootstrapMembers)
      || (s.pods.some((p) => p.name === a.member && p.neverRan) && !s.members?.some((m) => m.started))
      // A failed pod whose data is on its claim is restarted on it.
      || (!a.deleteClaim && s.claims.includes(a.member) && s.pods.some((p) => p.name === a.member && p.phase === 'Failed')),
  'force-delete only the pod of a member etcd has removed (fenced), never one of a listed member': (s, a) =>
    a.type !== 'DeletePod' || !a.force || (s.members !== undefined && !s.members.some((m) => m.name === a.member)),
  'never force-delete a pod on a live node: its containers may still run': (s, a) =>
    a.type !== 'DeletePod' || !a.force || s.pods.some((p) => p.name === a.member && p.nodeLost),
  // A rebuild deletes the lost cluster's pods for good: no pod of their names is made again.
  'a member on a lost node is never restarted (its kubelet does not answer); it is removed first': (s, a) =>
    clearingForRebuild(s) || !(a.type === 'DeletePod' && !a.force && !a.deleteClaim && s.members?.some((m) => m.name === a.member) && s.pods.some((p) => p.name === a.member && p.nodeLost)),
  'a pod template is recorded only on a pod judged on it, and only the spec\'s': (s, a) =>
    a.type !== 'PatchPodMetadata' || a.recordTemplate === undefined
      || (a.recordTemplate === s.targetTemplate && s.pods.some((p) => p.name === a.member && p.templateUnrecorded && p.template === s.targetTemplate)),
  'metadata is patched only on a live pod of a listed member': (s, a) =>
    a.type !== 'PatchPodMetadata' || (s.members?.some((m) => m.name === a.member) === true && s.pods.some((p) => p.name === a.member && !p.terminating)),
  'take over only what the CoreOS operator made and left settled: its operator not running, every live pod its and a started voter answering one leader on versions the spec\'s may be rolled out from, every member a pod, no claims, before any bootstrap': (s, a) => {
    if (a.type !== 'TakeOver' && a.type !== 'RecordTakeover') return true;
    const live = s.pods.filter((p) => !p.terminating);
    const members = s.members ?? [];
    return !s.bootstrapped && s.coreosOperatorActivity === undefined && s.claims.length === 0 && members.length > 0
      && live.length === members.length && live.every((p) => p.madeByCoreOS && members.some((m) => m.name === p.name))
      && members.every((m) => m.started && !m.isLearner && answers(s.health, m.name)) && agreedLeader(members, s.health) !== undefined
      && live.every((p) => atLeast(p.version, OLDEST_SUPPORTED) && p.phase !== 'Failed') && upgradeVerdict(live.map((p) => p.version), s.targetVersion).allowed
      && [...a.members].sort().join() === live.map((p) => p.name).sort().join();
  },
  'a takeover is recorded only once every pod carries the spec\'s settings and pod template': (s, a) =>
    a.type !== 'RecordTakeover' || s.pods.every((p) => p.config === s.targetConfig && p.template === s.targetTemplate && !p.templateUnrecorded),
  'nothing is done while the CoreOS operator may still act': (s, a) =>
    s.coreosOperatorActivity === undefined || s.paused || (a.type === 'Blocked' && a.cause === 'CoreOSOperatorRunning'),
  'never restart a member on a volume that came back empty': (s, a) =>
    clearingForRebuild(s) || !(a.type === 'DeletePod' && !a.deleteClaim && s.members?.some((m) => m.name === a.member) && s.pods.some((p) => p.name === a.member && p.dataLost)),
};

import type { ClusterStatus, Condition, EtcdCluster } from '../../api/etcd-cluster.js';
import type { Action, ClusterState, NoSpaceRecovery, PodView } from '../../etcd/planner.js';
import { agreedLeader, countAnswering, countServing, quorum, rollout, votersOf } from '../../etcd/planner.js';
import { lowestVersion } from '../../etcd/versions.js';
import type { EtcdStatus } from '../../etcd/client.js';
import { CLIENT_PORT } from '../../etcd/identity.js';
import { clusterLabels, labelSelector } from '../../k8s/labels.js';
import { unusedFieldsCondition } from './unused-fields.js';
import { leftClaimsCondition } from './left-claims.js';
import { byName } from '../../runtime/order.js';

/** Sets a condition, keeping its lastTransitionTime unless its status changes. */
function condition(previous: Condition[] | undefined, c: Omit<Condition, 'lastTransitionTime'>, now: string): Condition {
  const before = previous?.find((p) => p.type === c.type);
  return { ...c, lastTransitionTime: before && before.status === c.status ? before.lastTransitionTime : now };
}

const BUSY: Action['type'][] = [
  'Bootstrap', 'ResumeBootstrap', 'Adopt', 'CreatePod', 'AddMember', 'PromoteLearner', 'RemoveMember', 'MoveLeader', 'DeletePod', 'PatchPodMetadata', 'DeleteClaim', 'SetClaimAside', 'Wait',
  'Compact', 'Defragment', 'EnableDowngrade', 'CancelDowngrade', 'DisarmAlarms', 'StartRebuild', 'ClearedForRebuild', 'StartSurvivorRecovery', 'RestartSurvivor',
];

/** The refusal of a version change, while the spec asks for one etcd cannot move to. */
function upgradeCondition(s: ClusterState): Omit<Condition, 'lastTransitionTime'> {
  const { verdict, stale } = rollout(s);
  if (!verdict.allowed && stale.length > 0) return { type: 'UpgradeRefused', status: 'True', reason: verdict.reason, message: verdict.message };
  return { type: 'UpgradeRefused', status: 'False', reason: 'VersionAccepted', message: `version ${s.targetVersion} accepted` };
}

/** How far members have rolled onto the spec: a new version (Upgrading, or Downgrading a minor), or new settings or pod template (RollingSpec). */
interface RollProgress {
  reason: 'Upgrading' | 'Downgrading' | 'RollingSpec';
  /** Voters whose pod is as the spec makes it (version, settings, template), at most `of`. */
  rolled: number;
  /** The size the spec asks for. */
  of: number;
}

/** The roll under way, if members are not as the spec makes them and a version refused does not hold them. */
export function rollUnderWay(s: ClusterState): RollProgress | undefined {
  const r = rollout(s);
  const upgrading = r.stale.length > 0;
  if ((upgrading && !r.verdict.allowed) || (!upgrading && r.reconfigure.length === 0)) return undefined;
  // A pod stopping to be made again is not rolled yet; a member added in its place is, once a voter.
  const rolled = votersOf(s.members).filter((v) => s.pods.some((p) => p.name === v.name && !p.terminating) && !r.stale.includes(v.name) && !r.reconfigure.includes(v.name));
  const reason = !upgrading ? 'RollingSpec' : r.verdict.allowed && r.verdict.downgradeTo ? 'Downgrading' : 'Upgrading';
  return { reason, rolled: Math.min(rolled.length, s.desiredSize), of: s.desiredSize };
}

/** Members by where they run (a node, a zone), for the places holding at least `least` of them. */
function gathered(memberPods: PodView[], placeOf: (p: PodView) => string | undefined, least: number): [string, string[]][] {
  const by = new Map<string, string[]>();
  for (const p of memberPods) {
    const place = placeOf(p);
    if (place) by.set(place, [...(by.get(place) ?? []), p.name]);
  }
  return [...by].filter(([, members]) => members.length >= least).sort(([a], [b]) => byName(a, b));
}

/** The node, or the zone, holding a quorum of the voters (a strict majority: one at most), whose loss alone stops the cluster. */
function quorumInOnePlace(voting: PodView[], kind: 'node' | 'zone'): Omit<Condition, 'lastTransitionTime'> | undefined {
  const [held] = gathered(voting, (p) => p[kind], quorum(voting.length));
  if (!held) return undefined;
  const [place, members] = held;
  return {
    type: 'MembersSpread', status: 'False', reason: kind === 'node' ? 'QuorumOnOneNode' : 'QuorumInOneZone',
    message: `${members.length} of the ${voting.length} voters run ${kind === 'node' ? 'on' : 'in'} ${kind} ${place} (${members.sort().join(', ')}), a quorum: losing that ${kind} stops the cluster`,
  };
}

/**
 * Where the members run, the riskiest first: a quorum of the voters on one node or in one zone, whose loss
 * alone stops the cluster; then members sharing a node, which that node's loss takes together while the
 * others keep a quorum. More members than nodes must share: 5 on 3 nodes spread 2, 2, 1 (the best there is)
 * is only SharedNode, but 3, 1, 1 is QuorumOnOneNode. Sharing a zone without a quorum is no warning.
 */
function spreadCondition(memberPods: PodView[], voters: readonly string[] | undefined): Omit<Condition, 'lastTransitionTime'> {
  // Learners cast no vote; without a member list, every member pod is taken as one that does.
  const voting = voters ? memberPods.filter((p) => voters.includes(p.name)) : memberPods;
  // A single voter is a quorum wherever it runs: no spread to speak of.
  const risky = voting.length > 1 ? quorumInOnePlace(voting, 'node') ?? quorumInOnePlace(voting, 'zone') : undefined;
  if (risky) return risky;
  const nodes = gathered(memberPods, (p) => p.node, 2);
  if (nodes.length > 0) {
    const listed = nodes.map(([node, members]) => `${members.sort().join(', ')} on ${node}`).join('; ');
    return { type: 'MembersSpread', status: 'False', reason: 'SharedNode', message: `members share a node: ${listed}; losing that node loses them together` };
  }
  // Where a pod is not yet placed, nothing is known of how the members will be spread.
  const unplaced = memberPods.filter((p) => p.node === undefined).map((p) => p.name).sort();
  if (unplaced.length > 0) return { type: 'MembersSpread', status: 'Unknown', reason: 'NotScheduled', message: `member pods ${unplaced.join(', ')} are not on a node yet` };
  return { type: 'MembersSpread', status: 'True', reason: 'OnePerNode', message: 'no two members share a node, and no zone holds a quorum of them' };
}

/**
 * The NOSPACE recovery's progress after this action: kept while the alarm lasts, so no step is redone. Of the
 * record the plan was made on and the one stored now (fresher, after a conflict), the further one is kept.
 */
function noSpaceRecovery(prev: ClusterStatus | undefined, s: ClusterState, action: Action): NoSpaceRecovery | undefined {
  if (!s.alarms.some((a) => a.alarm === 'NOSPACE')) return undefined;
  if (action.type === 'DisarmAlarms' && action.alarms.some((a) => a.alarm === 'NOSPACE')) return undefined;
  const done = further(prev?.noSpaceRecovery, s.noSpaceRecovery);
  if (action.type === 'Compact' && action.revision > (done?.compactedRevision ?? 0)) return { compactedRevision: action.revision, defragmented: [] };
  if (action.type === 'Defragment' && !done?.defragmented?.includes(action.member)) return { ...done, defragmented: [...(done?.defragmented ?? []), action.member] };
  return done;
}

/** The record of the later compaction, or of more members defragmented after the same one. */
function further(a: NoSpaceRecovery | undefined, b: NoSpaceRecovery | undefined): NoSpaceRecovery | undefined {
  if (!a || !b) return a ?? b;
  if ((a.compactedRevision ?? 0) !== (b.compactedRevision ?? 0)) return (a.compactedRevision ?? 0) > (b.compactedRevision ?? 0) ? a : b;
  return { ...a, defragmented: [...new Set([...(a.defragmented ?? []), ...(b.defragmented ?? [])])] };
}

/** The API server refused what the operator made for the cluster: a spec that admission could not check. */
export interface Refusal {
  reason: 'Refused';
  message: string;
}

function degraded(s: ClusterState, action: Action, expected: number, unready: string[], rebuild: Rebuild | undefined, refusal?: Refusal): Omit<Condition, 'lastTransitionTime'> {
  if (action.type === 'QuorumLost' || action.type === 'CorruptionUndecided') return { type: 'Degraded', status: 'True', reason: action.type, message: action.reason };
  // What a person must do comes first: it is why nothing else moves.
  if (action.type === 'Blocked') return { type: 'Degraded', status: 'True', reason: action.cause, message: action.reason };
  if (refusal) return { type: 'Degraded', status: 'True', ...refusal };
  if (rebuild && !rebuild.completedAt) {
    return { type: 'Degraded', status: 'True', reason: 'RebuildingFromBackup', message: `a majority was lost; rebuilding from EtcdBackup ${rebuild.backup} at revision ${rebuild.revision}` };
  }
  if (s.survivorRecovery) {
    return { type: 'Degraded', status: 'True', reason: 'RecoveringFromSurvivor', message: `a majority was lost; recovering from member ${s.survivorRecovery.survivor} alone` };
  }
  const alarm = s.alarms.find((a) => a.alarm === 'CORRUPT') ?? s.alarms[0];
  if (alarm) {
    const message = alarm.alarm === 'CORRUPT'
      ? `etcd raised CORRUPT naming member ${alarm.memberId}; the members' data is compared (HashKV) and those that differ from a majority are replaced`
      : `etcd raised NOSPACE: writes are refused until the space is recovered${'reason' in action ? ` (${action.reason})` : ''}`;
    return { type: 'Degraded', status: 'True', reason: alarm.alarm === 'CORRUPT' ? 'AlarmCorrupt' : 'AlarmNoSpace', message };
  }
  const trouble = s.pods.find((p) => !p.terminating && p.trouble)?.trouble;
  if (trouble) return { type: 'Degraded', status: 'True', ...trouble };
  if (unready.length > 0) return { type: 'Degraded', status: 'True', reason: 'MembersUnready', message: `unready: ${unready.join(', ')}` };
  if (expected === 0) return { type: 'Degraded', status: 'True', reason: 'NoMembers', message: 'no member pod runs yet' };
  return { type: 'Degraded', status: 'False', reason: 'AllMembersReady', message: `all ${expected} members ready` };
}

/** Why the cluster does not serve: not up yet, no quorum answering, or a quorum answering with no leader they agree on. */
function unavailable(bootstrapped: boolean, voters: number, answering: number, detail: string): { reason: string; message: string } {
  if (!bootstrapped) return { reason: 'Bootstrapping', message: detail };
  if (voters > 0 && answering >= quorum(voters)) return { reason: 'NoLeader', message: `${answering} of ${voters} members answer but agree on no leader; ${detail}` };
  return { reason: 'NoQuorum', message: detail };
}

type Rebuild = NonNullable<ClusterStatus['rebuild']>;

/** The record of a rebuild from backup, as this action moves it on. */
function rebuildRecord(prev: ClusterStatus | undefined, action: Action, now: string): Rebuild | undefined {
  const record = prev?.rebuild;
  if (action.type === 'StartRebuild') {
    const reached = Math.max(0, ...(prev?.memberStatus ?? []).map((m) => m.revision ?? 0));
    const { backup, path, revision } = action.from;
    return { backup, path, revision, lostRevisions: Math.max(0, reached - revision), startedAt: now, cleared: false };
  }
  if (!record) return undefined;
  if (action.type === 'ClearedForRebuild') return { ...record, cleared: true };
  if (action.type === 'MarkBootstrapped' && !record.completedAt) return { ...record, completedAt: now };
  return record;
}

type SurvivorRecovery = NonNullable<ClusterStatus['survivorRecovery']>;

function survivorRecord(prev: ClusterStatus | undefined, action: Action, now: string): SurvivorRecovery | undefined {
  if (action.type === 'StartSurvivorRecovery') return { survivor: action.survivor, revision: action.revision, startedAt: now, forced: false };
  const record = prev?.survivorRecovery;
  if (!record) return undefined;
  if (action.type === 'RestartSurvivor') return { ...record, forced: true };
  if (action.type === 'CompleteSurvivorRecovery') return { ...record, completedAt: now };
  return record;
}

/** What a pass found beside its plan, for status: the API server's refusal of what it made, and how the claims grow to the spec's request. */
export interface PassFindings {
  refusal?: Refusal | undefined;
  volumeGrowth?: Omit<Condition, 'lastTransitionTime'> | undefined;
  /** The largest capacity a member's claim holds; undefined while unknown (a takeover, no claim bound) or without claims. */
  claimedStorage?: string | undefined;
}

/** The status a reconcile reports: what was observed, and what it is doing about it. */
export function clusterStatus(cluster: EtcdCluster, s: ClusterState, action: Action, statuses: ReadonlyMap<string, EtcdStatus>, now: string, findings: PassFindings = {}): ClusterStatus {
  const { refusal, volumeGrowth } = findings;
  const prev = cluster.status;
  // Kept while a pass could not tell (a takeover not through yet, no claim bound): admission reads it to refuse a shrink.
  const claimedStorage = findings.claimedStorage ?? prev?.claimedStorage;
  const versions = [...statuses.values()].map((x) => x.version).filter((v) => v !== '');
  // Only the two actions that decide it change it; otherwise the stored value stands, so that a plan made on a
  // lagging cache and written after a conflict can neither take it back nor bring it back.
  // An adoption re-forms a cluster that came up before: its members are restarted on their data, never anew.
  // A cluster taken over from the CoreOS operator came up under it.
  const bootstrapped = action.type === 'StartRebuild' ? false : ['MarkBootstrapped', 'Adopt', 'RecordTakeover'].includes(action.type) || (prev?.bootstrapped ?? false);
  // The CoreOS operator's cluster serves (or not) before it is this operator's: status says what it does, not "bootstrapping".
  const takingOver = !bootstrapped && s.pods.some((p) => p.madeByCoreOS);
  const rebuild = rebuildRecord(prev, action, now);
  const survivor = survivorRecord(prev, action, now);
  const rebuilding = (rebuild !== undefined && !rebuild.completedAt) || (survivor !== undefined && !survivor.completedAt);
  const voters = votersOf(s.members);
  // Available means served: a quorum of the voters follows one leader they agree on. Members that all answer
  // their status call but elect no leader serve nothing, and a restore must not complete on them.
  const serving = countServing(voters, s.health);
  const leader = agreedLeader(voters, s.health)?.name;
  const available = (bootstrapped || takingOver) && voters.length > 0 && serving >= quorum(voters.length);
  // Who should be serving: etcd's member list when a member answered; else the member pods and the membership
  // status recorded. A cluster none of whose members answers has none ready, never "all".
  const memberNames = new Set(s.members ? s.members.map((m) => m.name)
    : [...s.pods.filter((p) => !p.terminating).map((p) => p.name), ...(bootstrapped ? s.recordedMembers : [])]);
  const memberPods = s.pods.filter((p) => memberNames.has(p.name) && !p.terminating);
  const ready = memberPods.filter((p) => p.ready).map((p) => p.name).sort();
  const unready = [...memberNames].filter((n) => !ready.includes(n)).sort();
  // The lowest version a member reports: etcd's cluster version cannot be above it.
  const current = lowestVersion(versions) ?? prev?.currentVersion;
  // A takeover records the spec's settings on the pods it was observed without: nothing rolls.
  const roll = takingOver || action.type === 'RecordTakeover' ? undefined : rollUnderWay(s);
  const busy = BUSY.includes(action.type);
  const detail = 'reason' in action ? action.reason : action.type;
  const phase = action.type === 'Paused' ? 'Paused'
    : action.type === 'QuorumLost' ? 'Failed'
    : rebuilding ? 'Restoring'
    : takingOver ? 'TakingOver'
    // A new cluster is Creating until its members are first all ready, not Recovering in between.
    : !bootstrapped || (prev?.phase === 'Creating' && unready.length > 0) ? 'Creating'
    // A roll onto new settings or a new pod template is shown as an upgrade is: members are made again one by one.
    : roll ? 'Upgrading'
    : voters.length !== s.desiredSize ? 'Scaling'
    // A person must act: whatever it looks like, the cluster is not running as asked. A metadata patch
    // (spec.pod labels, annotations) restarts nothing: no recovery.
    : (busy && action.type !== 'PatchPodMetadata') || unready.length > 0 || action.type === 'Blocked' ? 'Recovering'
    : 'Running';
  const generation = cluster.metadata.generation;
  const recovery = noSpaceRecovery(prev, s, action);
  const disarmedAt = action.type === 'DisarmAlarms' && action.alarms.some((a) => a.alarm === 'NOSPACE') ? now : prev?.noSpaceDisarmedAt;
  const unused = unusedFieldsCondition(cluster.spec);
  const left = leftClaimsCondition(bootstrapped, s.retained);
  const coreosPods = s.pods.filter((p) => p.madeByCoreOS && !p.terminating).map((p) => p.name).sort();
  return {
    phase,
    ...(action.type === 'QuorumLost' ? { reason: action.reason } : {}),
    controlPaused: action.type === 'Paused',
    observedGeneration: generation,
    bootstrapped,
    size: voters.length,
    readyMembers: ready.length,
    selector: labelSelector(clusterLabels(cluster.metadata.name)),
    members: { ready, unready },
    ...(action.type === 'Adopt' ? { membership: action.members }
      : s.members ? { membership: s.members.map((m) => m.name).sort() } : prev?.membership ? { membership: prev.membership } : {}),
    ...(leader ? { leader } : {}),
    ...(action.type === 'RecordTakeover' ? { takenOver: { from: 'coreos-etcd-operator', at: now, members: action.members } } : prev?.takenOver ? { takenOver: prev.takenOver } : {}),
    ...(current ? { currentVersion: current } : {}),
    targetVersion: s.targetVersion,
    serviceName: `${cluster.metadata.name}-client`,
    clientPort: CLIENT_PORT,
    conditions: [
      condition(prev?.conditions, available
        ? { type: 'Available', status: 'True', reason: 'QuorumHealthy', message: `${serving} of ${voters.length} members healthy, following leader ${leader ?? ''}` }
        : { type: 'Available', status: 'False', ...unavailable(bootstrapped || takingOver, voters.length, countAnswering(voters, s.health), detail) }, now),
      condition(prev?.conditions, busy && roll
        ? { type: 'Progressing', status: 'True', reason: roll.reason, message: `members rolled ${roll.rolled} of ${roll.of}; ${detail}` }
        : busy ? { type: 'Progressing', status: 'True', reason: action.type, message: detail }
        : { type: 'Progressing', status: 'False', reason: action.type, message: detail }, now),
      condition(prev?.conditions, degraded(s, action, memberNames.size, unready, rebuild, refusal), now),
      condition(prev?.conditions, upgradeCondition(s), now),
      condition(prev?.conditions, spreadCondition(memberPods, s.members && voters.map((v) => v.name)), now),
      ...(unused ? [condition(prev?.conditions, unused, now)] : []),
      ...(left ? [condition(prev?.conditions, left, now)] : []),
      ...(volumeGrowth ? [condition(prev?.conditions, volumeGrowth, now)] : []),
      ...(bootstrapped && coreosPods.length > 0 ? [condition(prev?.conditions, coreosPodsCondition(coreosPods), now)] : []),
    ].map((c) => ({ ...c, observedGeneration: generation })),
    memberStatus: [...statuses].map(([name, x]) => ({
      name, id: x.memberId, version: x.version, isLeader: x.leaderId !== '' && x.leaderId === x.memberId, isLearner: x.isLearner,
      raftIndex: x.raftIndex, raftTerm: x.raftTerm, revision: x.revision, dbSize: x.dbSize, dbSizeInUse: x.dbSizeInUse,
    })).sort((a, b) => byName(a.name, b.name)),
    alarms: s.alarms.map((a) => ({ member: s.members?.find((m) => m.id === a.memberId)?.name ?? a.memberId, alarm: a.alarm })),
    ...(recovery ? { noSpaceRecovery: recovery } : {}),
    ...(disarmedAt ? { noSpaceDisarmedAt: disarmedAt } : {}),
    ...(claimedStorage !== undefined ? { claimedStorage } : {}),
    ...(rebuild ? { rebuild } : {}),
    ...(survivor ? { survivorRecovery: survivor } : {}),
  };
}

/**
 * Members taken over still on the CoreOS operator's pods: on the spec's version, name and URLs, but not on what else
 * this operator gives a member, which a person should know until the next roll replaces them.
 */
function coreosPodsCondition(pods: string[]): Omit<Condition, 'lastTransitionTime'> {
  return {
    type: 'CoreOSPods', status: 'True', reason: 'TakenOverInPlace',
    message: `members ${pods.join(', ')} run on the pods the CoreOS etcd-operator made: they never restart (restartPolicy Never; a failed one is replaced), `
      + 'and lack this operator\'s etcd flags (corruption checks, spec quota, auto-compaction and etcdEnv) and voter gate. The next change that rolls members '
      + '(spec.version, or spec.pod: resources, placement, etcdEnv) replaces them one at a time with this operator\'s pods',
  };
}

/** The status of a cluster whose configuration cannot be acted on: Degraded says why; the rest is left as observed. */
export function misconfigured(cluster: EtcdCluster, err: { reason: string; message: string }, now: string): ClusterStatus {
  const prev = cluster.status;
  const degraded = condition(prev?.conditions, { type: 'Degraded', status: 'True', reason: err.reason, message: err.message }, now);
  const conditions = [...(prev?.conditions ?? []).filter((c) => c.type !== 'Degraded'), { ...degraded, observedGeneration: cluster.metadata.generation }];
  // A cluster stopped by its configuration before its bootstrap is still being created: its phase says so rather
  // than nothing, and the condition says why it does not go on.
  return { ...prev, phase: prev?.phase || 'Creating', observedGeneration: cluster.metadata.generation, conditions };
}

// The planner's liveness (DESIGN §7): from every state the plan makes progress, names why a person must act
// (a cause from the closed list, only where that cause holds), or waits for members it names that come by
// themselves within a bound, and no Wait outlives its bound; Steady means the spec is met. Checked over
// generated cluster states (test/unit/cluster-states.ts). A planner that always answers Blocked or Steady fails it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BLOCKED_CAUSES, NOSPACE_RECOVERY_INTERVAL_MS, WAITING_FOR, answers, countAnswering, personNeeded, plan, quorum, votersOf } from '../../src/etcd/planner.js';
import type { Action, BlockedCause, ClusterState, PodView } from '../../src/etcd/planner.js';
import { clusterStates } from './cluster-states.js';
import { health, healthy } from './planner-fixtures.js';
import { OLDEST_SUPPORTED, atLeast, upgradeVerdict } from '../../src/etcd/versions.js';

const PERSON_NEEDED: string[] = [...Object.keys(BLOCKED_CAUSES), 'QuorumLost', 'CorruptionUndecided', 'UpgradeRefused'];

/**
 * The state once every bound a Wait can name has passed and nothing came by itself: each listed member that
 * does not answer silent past the threshold (on a lost node, stranded past its own), with no member list every
 * member unheard past it, each that answers come no
 * closer to the leader's log past the stall bound (one caught up is not judged on it), each claim of no member
 * past the grace period, and every deleted pod on a live node gone (Kubernetes' grace period) or, `stuck`,
 * still there past the bound that names it. Pods that have not started stay as they are: whether they start is
 * the kubelet's, and what keeps them is reported.
 */
function expired(s: ClusterState, stuck: boolean): ClusterState {
  const listed = (name: string): boolean => s.members?.some((m) => m.name === name) ?? false;
  const silent = s.pods.filter((p) => listed(p.name) && !answers(s.health, p.name));
  const past = (names: string[], ms: number, was: Record<string, number>): Record<string, number> =>
    ({ ...was, ...Object.fromEntries(names.map((n) => [n, Math.max(was[n] ?? 0, ms + 1)])) });
  const unclaimed = s.members ? s.claims.filter((c) => !listed(c) && !s.pods.some((p) => p.name === c)) : [];
  return {
    ...s,
    pods: stuck ? s.pods : s.pods.filter((p) => !p.terminating || p.nodeLost),
    stoppingForMs: stuck ? past(s.pods.filter((p) => p.terminating).map((p) => p.name), s.stuckStoppingAfterMs, s.stoppingForMs) : s.stoppingForMs,
    silentForMs: past(silent.filter((p) => !p.terminating).map((p) => p.name), s.replaceAfterMs, s.silentForMs),
    strandedForMs: past(silent.filter((p) => p.nodeLost).map((p) => p.name), s.replaceOnNodeLossAfterMs, s.strandedForMs),
    unclaimedForMs: past(unclaimed, s.claimGraceMs, s.unclaimedForMs),
    stalledForMs: past(s.health.map((h) => h.name).filter(listed), s.stalledAfterMs, s.stalledForMs),
    ...(s.members === undefined && s.pods.length > 0 ? { unheardForMs: Math.max(s.unheardForMs ?? 0, s.replaceAfterMs + 1) } : {}),
    ...(s.noSpaceDisarmedForMs !== undefined ? { noSpaceDisarmedForMs: Math.max(s.noSpaceDisarmedForMs, NOSPACE_RECOVERY_INTERVAL_MS) } : {}),
  };
}

/** A pod that can still run etcd by itself: not stopping, not failed for good, its data not lost, its node not lost. */
const canRun = (p: PodView): boolean => !p.terminating && p.phase !== 'Failed' && !p.dataLost && !p.nodeLost;

const podOf = (s: ClusterState, name: string): PodView | undefined => s.pods.find((p) => p.name === name);
const listed = (s: ClusterState, name: string): boolean => s.members?.some((m) => m.name === name) ?? false;

/** A member that does not answer yet and will by itself: its pod can run and, if etcd lists it, is not silent past the threshold; or it restarts on its claim. */
const mayComeBack = (s: ClusterState, name: string): boolean => {
  const pod = podOf(s, name);
  if (!pod) return s.claims.includes(name);
  // Without a member list every member is silent to the operator: past the bound, none is taken to come back by itself.
  const unheard = s.members === undefined && (s.unheardForMs ?? 0) > s.replaceAfterMs;
  return canRun(pod) && !unheard && !(listed(s, name) && (s.silentForMs[name] ?? 0) > s.replaceAfterMs);
};

/**
 * Whether what a Wait waits for comes by itself, from exactly the members it names, in a state whose bounds
 * have all passed.
 */
function stillComing(s: ClusterState, a: Extract<Action, { type: 'Wait' }>): boolean {
  const each = (holds: (name: string) => boolean): boolean => a.members.length > 0 && a.members.every(holds);
  switch (a.awaiting) {
    case 'PodStopping':
      return each((n) => s.pods.some((p) => p.name === n && p.terminating && !p.nodeLost) && (s.stoppingForMs[n] ?? 0) <= s.stuckStoppingAfterMs);
    case 'MembersStarting':
      // Whether a pod that can run starts etcd is its kubelet's; what keeps it is reported.
      return each((n) => { const p = podOf(s, n); return answers(s.health, n) || (p !== undefined && canRun(p)); });
    case 'MembersAnswering':
      return each((n) => answers(s.health, n) || mayComeBack(s, n));
    case 'MemberReady':
      return each((n) => { const p = podOf(s, n); return p !== undefined && canRun(p) && !p.ready && answers(s.health, n); });
    case 'CatchingUp':
      return each((n) => answers(s.health, n) && (s.stalledForMs[n] ?? 0) <= s.stalledAfterMs);
    case 'LeaderElection':
      return s.health.length >= quorum(votersOf(s.members).length);
    case 'NoSpaceInterval':
      return (s.noSpaceDisarmedForMs ?? Infinity) < NOSPACE_RECOVERY_INTERVAL_MS;
    case 'StorageDowngrade':
      // etcd lowers the storage version of every member that answers once the downgrade is enabled.
      return each((n) => answers(s.health, n)) && s.health.some((h) => Boolean(h.downgradeTarget));
  }
}

/**
 * What must hold of a state for each cause a person is told of: a Blocked plan is never a shrug. Each says
 * that the rules cannot act and nothing comes by itself, in the terms of that cause.
 */
const BLOCKED_WHEN: Record<BlockedCause, (s: ClusterState) => boolean> = {
  UnrecordedBootstrap: (s) => !s.bootstrapped && (s.pods.length > 0 || (s.members ?? []).length > 0 || s.claims.some((c) => !s.claimMarks.setAside.includes(c))),
  NodeLost: (s) => s.pods.some((p) => p.nodeLost),
  TooFewAnswering: (s) => {
    const voters = votersOf(s.members);
    const needed = Math.max(quorum(Math.max(voters.length - 1, 0)), quorum(s.desiredSize));
    // Of the voters that do not answer, none may come back by itself, other than the one a repair would remove.
    return countAnswering(voters, s.health) <= needed && voters.filter((v) => !answers(s.health, v.name) && mayComeBack(s, v.name)).length <= 1;
  },
  BootstrapStalled: (s) => !s.bootstrapped && s.pods.some((p) => !canRun(p)),
  MembershipUnknown: (s) => s.members === undefined && s.recordedMembers.length === 0 && !s.pods.some(canRun),
  RetainedClaimsRemoved: (s) => !s.bootstrapped && s.retained.some((c) => c.removed),
  CatchUpStalled: (s) => (s.members ?? []).some((m) => answers(s.health, m.name) && (s.stalledForMs[m.name] ?? 0) > s.stalledAfterMs),
  PodStuckStopping: (s) => s.pods.some((p) => p.terminating && !p.nodeLost && (s.stoppingForMs[p.name] ?? 0) > s.stuckStoppingAfterMs),
  Unreachable: (s) => s.members === undefined && s.pods.some(canRun) && (s.unheardForMs ?? 0) > s.replaceAfterMs,
  SurvivorLost: (s) => s.survivorRecovery !== undefined && !s.pods.some((p) => p.name === s.survivorRecovery?.survivor && canRun(p)),
  // Something a person must undo by hand; a member that does not answer only once it has been silent past the bound.
  TakeoverUnsafe: (s) => {
    const live = s.pods.filter((p) => !p.terminating);
    const members = s.members;
    return !s.bootstrapped && live.some((p) => p.madeByCoreOS === true) && (s.claims.length > 0
      || live.some((p) => !p.madeByCoreOS || !listed(s, p.name) || p.phase === 'Failed') || members === undefined
      || members.some((m) => !m.started || m.isLearner || !podOf(s, m.name) || (!answers(s.health, m.name) && (s.silentForMs[m.name] ?? 0) > s.replaceAfterMs))
      || live.some((p) => !atLeast(p.version, OLDEST_SUPPORTED)) || !upgradeVerdict(live.map((p) => p.version), s.targetVersion).allowed);
  },
  CoreOSOperatorRunning: (s) => s.coreosOperatorActivity !== undefined,
  // A pod no node fits, or a hard one-member-per-node rule with fewer free nodes than the members to place.
  AlarmNamesNoMember: (s) => s.alarms.some((a) => a.memberId === '0' || a.memberId === ''),
  // Only once the recovery compacted at the leader's revision: a newer one means keys deleted since, freed by compacting again.
  QuotaFull: (s) => s.alarms.some((a) => a.alarm === 'NOSPACE') && s.health.some((h) => h.dbSize >= s.quotaBackendBytes * 0.95)
    && s.health.some((h) => h.isLeader && s.noSpaceRecovery?.compactedRevision !== undefined && h.revision <= s.noSpaceRecovery.compactedRevision),
  TooFewNodes: (s) => s.pods.some((p) => p.unschedulable && !p.terminating)
    || (s.placeableNodes !== undefined && s.placeableNodes.filter((n) => !s.pods.some((p) => p.node === n)).length < (s.bootstrapped ? 1 : s.desiredSize)),
};

/** A pod as the spec makes it now: its version, settings, pod template (recorded) and labels and annotations. */
const asSpecified = (s: ClusterState, p: PodView): boolean => p.version === s.targetVersion && p.config === s.targetConfig
  && p.template === s.targetTemplate && !p.templateUnrecorded && p.metadata === s.targetMetadata;

/** Steady claims the spec is met: every voter of the desired count ready on its pod, as the spec makes it, no alarm, no change in flight. */
function specMet(s: ClusterState): boolean {
  const members = s.members ?? [];
  const pods = s.pods.filter((p) => !p.terminating);
  return members.length === s.desiredSize && members.every((m) => !m.isLearner && m.started)
    && members.every((m) => pods.some((p) => p.name === m.name && p.ready && !p.nodeLost && asSpecified(s, p)))
    && pods.every((p) => listed(s, p.name)) && s.alarms.length === 0 && s.bootstrapped;
}

test('liveness, over 60,000 generated states: every plan makes progress, names a cause a person must act on from the closed list (only where it holds), or waits for something bounded; Steady only with the spec met', () => {
  fc.assert(fc.property(clusterStates, (s) => {
    const a = plan(s);
    const cause = personNeeded(a);
    if (cause !== undefined) assert.ok(PERSON_NEEDED.includes(cause), `cause outside the closed list: ${JSON.stringify(a)}`);
    if (a.type === 'Blocked') assert.ok(BLOCKED_WHEN[a.cause](s), `${a.cause} where it does not hold: ${JSON.stringify(a)}`);
    if (a.type === 'Wait') assert.ok(Object.keys(WAITING_FOR).includes(a.awaiting), `wait for something unbounded: ${JSON.stringify(a)}`);
    if (a.type === 'Steady') assert.ok(specMet(s), `Steady with the spec not met: ${JSON.stringify(a)}`);
  }), { numRuns: 60_000 });
});

test('liveness, over 60,000 generated states: no Wait outlives its bound (once every bound has passed, a plain Wait is only for what still comes by itself)', () => {
  fc.assert(fc.property(clusterStates, fc.boolean(), (generated, stuck) => {
    const s = expired(generated, stuck);
    const a = plan(s);
    if (a.type === 'Wait') assert.ok(stillComing(s, a), `waits for ever: ${JSON.stringify(a)}`);
  }), { numRuns: 60_000 });
});

/** Healthy clusters of 1 to 5 members (the spec met), NOSPACE raised and its recovery run, the databases around the quota. */
const afterRecovery = fc.record({
  size: fc.integer({ min: 1, max: 5 }), leader: fc.nat(4), revision: fc.integer({ min: 2, max: 1000 }), deletedSince: fc.boolean(),
  fills: fc.array(fc.double({ min: 0.5, max: 1.5, noNaN: true }), { minLength: 5, maxLength: 5 }),
}).map(({ size, leader, revision, deletedSince, fills }) => {
  const names = ['a', 'b', 'c', 'd', 'e'].slice(0, size);
  const leading = names[leader % size] ?? 'a';
  const quota = 1_000_000;
  return {
    deletedSince, full: fills.slice(0, size).some((f) => f >= 0.95),
    state: healthy(names, {
      alarms: [{ memberId: `id-${leading}`, alarm: 'NOSPACE' }], quotaBackendBytes: quota,
      health: names.map((n, i) => health(n, { isLeader: n === leading, leaderId: `id-${leading}`, revision, dbSize: Math.round(quota * (fills[i] ?? 1)) })),
      noSpaceRecovery: { compactedRevision: revision - (deletedSince ? 1 : 0), defragmented: names },
    }),
  };
});

test('liveness, over 20,000 generated clusters whose NOSPACE recovery ran: never Steady while etcd refuses writes; disarmed once space is back, compacted again once keys were deleted since, left to a person only otherwise', () => {
  fc.assert(fc.property(afterRecovery, ({ state, full, deletedSince }) => {
    const a = plan(state);
    const expected = !full ? 'DisarmAlarms' : deletedSince ? 'Compact' : 'Blocked';
    assert.equal(a.type, expected, JSON.stringify(a));
    if (a.type === 'Blocked') assert.equal(a.cause, 'QuotaFull');
  }), { numRuns: 20_000 });
});

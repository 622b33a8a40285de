// The planner's liveness (DESIGN §7): from every state the plan makes progress, names why a person must act
// (a cause from the closed list), or waits for something that comes by itself within a bound, and no Wait
// outlives its bound. Checked over generated cluster states (test/unit/cluster-states.ts).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { BLOCKED_CAUSES, WAITING_FOR, answers, personNeeded, plan, quorum, votersOf } from '../../src/etcd/planner.js';
import type { Action, ClusterState, PodView } from '../../src/etcd/planner.js';
import { clusterStates } from './cluster-states.js';

const PERSON_NEEDED: string[] = [...Object.keys(BLOCKED_CAUSES), 'QuorumLost', 'CorruptionUndecided', 'UpgradeRefused'];

/**
 * The state once every bound a Wait can name has passed and nothing came by itself: each listed member that
 * does not answer silent past the threshold (on a lost node, stranded past its own), each claim of no member
 * past the grace period, and every deleted pod on a live node gone (Kubernetes' grace period). Pods that have
 * not started stay as they are: whether they start is the kubelet's, and what keeps them is reported.
 */
function expired(s: ClusterState): ClusterState {
  const listed = (name: string): boolean => s.members?.some((m) => m.name === name) ?? false;
  const silent = s.pods.filter((p) => listed(p.name) && !answers(s.health, p.name));
  const past = (names: string[], ms: number, was: Record<string, number>): Record<string, number> =>
    ({ ...was, ...Object.fromEntries(names.map((n) => [n, Math.max(was[n] ?? 0, ms + 1)])) });
  const unclaimed = s.members ? s.claims.filter((c) => !listed(c) && !s.pods.some((p) => p.name === c)) : [];
  return {
    ...s,
    pods: s.pods.filter((p) => !p.terminating || p.nodeLost),
    silentForMs: past(silent.filter((p) => !p.terminating).map((p) => p.name), s.replaceAfterMs, s.silentForMs),
    strandedForMs: past(silent.filter((p) => p.nodeLost).map((p) => p.name), s.replaceOnNodeLossAfterMs, s.strandedForMs),
    unclaimedForMs: past(unclaimed, s.claimGraceMs, s.unclaimedForMs),
  };
}

/** A pod that can still run etcd by itself: not stopping, not failed for good, its data not lost, its node not lost. */
const canRun = (p: PodView): boolean => !p.terminating && p.phase !== 'Failed' && !p.dataLost && !p.nodeLost;

/** Whether what a Wait waits for is there, and comes by itself, in a state whose bounds have all passed. */
function stillComing(s: ClusterState, a: Extract<Action, { type: 'Wait' }>): boolean {
  switch (a.awaiting) {
    case 'PodStopping':
      return false;
    case 'MembersStarting':
      return s.pods.some(canRun) || s.pods.some((p) => s.members?.some((m) => m.name === p.name && !m.started) && answers(s.health, p.name));
    case 'MembersAnswering':
      return s.pods.some(canRun);
    case 'MemberReady':
      return s.pods.some((p) => canRun(p) && !p.ready && answers(s.health, p.name));
    case 'CatchingUp':
      return s.health.some((h) => !h.isLeader && s.members?.some((m) => m.name === h.name));
    case 'LeaderElection':
      return s.health.length >= quorum(votersOf(s.members).length);
  }
}

test('liveness, over 60,000 generated states: every plan makes progress, names a cause a person must act on from the closed list, or waits for something bounded', () => {
  fc.assert(fc.property(clusterStates, (s) => {
    const a = plan(s);
    const cause = personNeeded(a);
    if (cause !== undefined) assert.ok(PERSON_NEEDED.includes(cause), `cause outside the closed list: ${JSON.stringify(a)}`);
    if (a.type === 'Wait') assert.ok(Object.keys(WAITING_FOR).includes(a.awaiting), `wait for something unbounded: ${JSON.stringify(a)}`);
  }), { numRuns: 60_000 });
});

test('liveness, over 60,000 generated states: no Wait outlives its bound (once every bound has passed, a plain Wait is only for what still comes by itself)', () => {
  fc.assert(fc.property(clusterStates, (generated) => {
    const s = expired(generated);
    const a = plan(s);
    if (a.type === 'Wait') assert.ok(stillComing(s, a), `waits for ever: ${JSON.stringify(a)}`);
  }), { numRuns: 60_000 });
});

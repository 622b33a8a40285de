// States of a healthy cluster for the planner's tests, each part overridable.
import type { ClusterState, MemberHealth, MemberView, PodView } from '../../src/etcd/planner.js';

export const pod = (name: string, o: Partial<PodView> = {}): PodView =>
  ({ name, phase: 'Running', ready: true, terminating: false, version: '3.5.17', config: '', template: '', metadata: '', forced: false, dataLost: false, ...o });
export const member = (name: string, o: Partial<MemberView> = {}): MemberView => ({ id: `id-${name}`, name, isLearner: false, started: true, ...o });
/** A member's answer; it follows a unless told otherwise (a leader's `isLeader` alone does not make it one voters follow). */
export const health = (name: string, o: Partial<MemberHealth> = {}): MemberHealth => ({ name, raftIndex: 100, isLeader: false, leaderId: o.isLeader ? `id-${name}` : 'id-a', revision: 50, dbSize: 1000, dbSizeInUse: 900, ...o });

/** A healthy bootstrapped cluster of the named members, `a` leading; override any part. */
export function healthy(names: string[], o: Partial<ClusterState> = {}): ClusterState {
  return {
    desiredSize: names.length, paused: false, bootstrapped: true,
    pods: names.map((n) => pod(n)), claims: [], claimMarks: { neverRan: [], started: [], setAside: [] }, retained: [],
    members: names.map((n) => member(n)), recordedMembers: names,
    health: names.map((n) => health(n, { isLeader: n === 'a' })),
    supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: {}, silentForMs: {}, stoppingForMs: {}, stuckStoppingAfterMs: 300_000, unclaimedForMs: {}, claimGraceMs: 600_000, learnerMaxLag: 10, stalledForMs: {}, stalledAfterMs: 600_000, targetVersion: '3.5.17', targetConfig: '', targetTemplate: '', targetMetadata: '', alarms: [], quotaBackendBytes: 2 ** 31,
    ...o,
  };
}


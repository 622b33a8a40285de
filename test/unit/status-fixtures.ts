import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { ClusterState, MemberHealth } from '../../src/etcd/planner.js';
import type { EtcdStatus } from '../../src/etcd/client.js';

/** A cluster, its observed state and its members' answers, as the status and metrics tests start from. */
export const cluster = (o: Partial<EtcdCluster> = {}): EtcdCluster => ({
  apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdCluster',
  metadata: { name: 'ex', namespace: 'ns', uid: 'u', generation: 4 }, spec: { size: 3, version: 'v3.5.17' }, status: { bootstrapped: true }, ...o,
});
/** A member's answer, following a (member IDs are the names here). */
export const h = (name: string, o: Partial<MemberHealth> = {}): MemberHealth => ({ name, raftIndex: 9, isLeader: false, leaderId: 'a', revision: 5, dbSize: 100, dbSizeInUse: 50, ...o });
export const state = (o: Partial<ClusterState> = {}): ClusterState => ({
  desiredSize: 3, paused: false, bootstrapped: true,
  pods: ['a', 'b', 'c'].map((name) => ({ name, phase: 'Running', ready: true, terminating: false, version: '3.5.17', config: '', template: '', metadata: '', forced: false, dataLost: false })),
  claims: [], claimMarks: { neverRan: [], started: [], setAside: [] }, retained: [], members: ['a', 'b', 'c'].map((name) => ({ id: name, name, isLearner: false, started: true })), recordedMembers: ['a', 'b', 'c'],
  health: [h('a', { isLeader: true }), h('b'), h('c')],
  supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: {}, silentForMs: {}, stoppingForMs: {}, stuckStoppingAfterMs: 300_000, unclaimedForMs: {}, claimGraceMs: 600_000, learnerMaxLag: 10, stalledForMs: {}, stalledAfterMs: 600_000, targetVersion: '3.5.17', targetConfig: '', targetTemplate: '', targetMetadata: '', alarms: [], quotaBackendBytes: 2 ** 31, ...o,
});
export const NOW = '2026-11-22T00:00:00Z';
/** What members report: one status per version given, named a, b, c… */
export const reports = (versions: string[]): Map<string, EtcdStatus> => new Map(versions.map((version, i) => [String.fromCharCode(97 + i), {
  memberId: `id${i}`, leaderId: 'id0', raftIndex: 9, raftTerm: 2, revision: 5, dbSize: 100, dbSizeInUse: 50, version, isLearner: false, errors: [], storageVersion: '', downgradeTarget: '',
}]));

// The planner's safety invariants (src/etcd/planner.ts, INVARIANTS), checked over generated cluster states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { INVARIANTS, plan } from '../../src/etcd/planner.js';
import type { ClusterState, PodView } from '../../src/etcd/planner.js';
import { clusterStates } from './cluster-states.js';

for (const [name, holds] of Object.entries(INVARIANTS)) {
  test(`planner invariant, over 5,000 generated states: ${name}`, () => {
    fc.assert(fc.property(clusterStates, (s) => {
      const action = plan(s);
      assert.ok(holds(s, action), `${name}: ${JSON.stringify(action)}`);
    }), { numRuns: 5000 });
  });
}

test('a member whose stopping pod found its volume empty is not restarted on it (the counterexample of seed 2093520639)', () => {
  const pod = (name: string): PodView => ({ name, phase: 'Pending', ready: false, terminating: true, version: '3.5.17', config: '', template: '', metadata: '', forced: false, dataLost: true });
  const s: ClusterState = {
    desiredSize: 5, paused: false, bootstrapped: true, pods: [pod('b'), pod('e')], claims: ['b'], claimMarks: { neverRan: [], started: [], setAside: [] }, retained: [],
    members: [{ id: 'id-b', name: 'b', isLearner: false, started: true }], recordedMembers: [],
    health: [{ name: 'b', isLeader: false, leaderId: '', dbSizeInUse: 0, raftIndex: 0, revision: 1, dbSize: 0 }],
    supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: {}, silentForMs: { b: 108_000 }, stoppingForMs: {}, stuckStoppingAfterMs: 300_000, unclaimedForMs: {}, claimGraceMs: 600_000, learnerMaxLag: 100, stalledForMs: {}, stalledAfterMs: 600_000,
    targetVersion: '3.6.5', targetConfig: '', targetTemplate: '', targetMetadata: '', alarms: [], quotaBackendBytes: 2 ** 31,
  };
  const action = plan(s);
  const holds = INVARIANTS['never restart a member on a volume that came back empty'];
  assert.ok(holds?.(s, action), JSON.stringify(action));
});

test('a never-started member whose pod found its volume emptied is not restarted on it for a changed pod template (the counterexample of seed 724645762)', () => {
  const pod = (name: string, o: Partial<PodView>): PodView =>
    ({ name, phase: 'Pending', ready: false, terminating: false, version: '3.5.17', config: '', metadata: 'm', forced: false, template: 't', dataLost: false, templateUnrecorded: true, ...o });
  const s: ClusterState = {
    desiredSize: 1, generation: 2, paused: false, bootstrapped: true,
    pods: [pod('b', { template: 'old', dataLost: true }), pod('d', {})],
    claims: ['b'], retained: [], members: ['b', 'd'].map((name) => ({ id: `id-${name}`, name, isLearner: false, started: false })),
    recordedMembers: ['b', 'd'], claimMarks: { neverRan: ['b'], started: [], setAside: [] }, health: [],
    supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: {}, silentForMs: {}, stoppingForMs: {}, stuckStoppingAfterMs: 300_000,
    unclaimedForMs: {}, claimGraceMs: 600_000, learnerMaxLag: 100, stalledForMs: {}, stalledAfterMs: 600_000,
    targetVersion: '3.5.17', targetConfig: '', targetTemplate: 't', targetMetadata: 'm', alarms: [], quotaBackendBytes: 2 ** 31,
  };
  const action = plan(s);
  assert.ok(INVARIANTS['never restart a member on a volume that came back empty']?.(s, action), JSON.stringify(action));
});

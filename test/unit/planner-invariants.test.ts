// The planner's safety invariants (src/etcd/planner.ts, INVARIANTS), checked over generated cluster states.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { INVARIANTS, plan } from '../../src/etcd/planner.js';
import type { AlarmView, ClusterState, MemberHealth, MemberView, PodView, RetainedClaim } from '../../src/etcd/planner.js';

const NAMES = ['a', 'b', 'c', 'd', 'e'] as const;
const VERSIONS = ['3.5.17', '3.6.5'];

/** Some of the names, in order. */
const someNames = fc.subarray([...NAMES]);

const podOf = (name: string): fc.Arbitrary<PodView> => fc.record({
  phase: fc.constantFrom<PodView['phase']>('Pending', 'Running', 'Running', 'Failed', 'Unknown'),
  ready: fc.boolean(), terminating: fc.boolean(), version: fc.constantFrom(...VERSIONS), config: fc.constantFrom('', 'x'),
  forced: fc.constant(false), dataLost: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), bootstrap: fc.option(someNames, { nil: undefined }),
  neverRan: fc.boolean(), specGeneration: fc.integer({ min: 1, max: 3 }),
  // Its node's state: mostly fine, sometimes lost (NotReady), sometimes being drained; two members may share one.
  node: fc.constantFrom('fine', 'fine', 'fine', 'lost', 'draining'), on: fc.constantFrom('n1', 'n2', 'n3'),
}).map(({ bootstrap, neverRan, node, on, ...p }) => ({
  name, ...p, node: on, ...(neverRan ? { neverRan } : {}), ...(bootstrap && bootstrap.length > 0 ? { bootstrapMembers: bootstrap } : {}),
  ...(node === 'lost' ? { nodeLost: true as const } : node === 'draining' ? { nodeDraining: true as const } : {}),
}));

const memberOf = (name: string): fc.Arbitrary<MemberView> =>
  fc.record({ isLearner: fc.boolean(), started: fc.boolean() }).map((m) => ({ id: `id-${name}`, name, ...m }));

const healthOf = (name: string): fc.Arbitrary<MemberHealth> => fc.record({
  raftIndex: fc.integer({ min: 0, max: 3000 }), revision: fc.integer({ min: 1, max: 1000 }), dbSize: fc.integer({ min: 0, max: 2 ** 31 }),
}).map((h) => ({ name, isLeader: false, leaderId: '', dbSizeInUse: Math.floor(h.dbSize / 2), ...h }));

/** Cluster states of up to five members, any mix of pods, claims, answers, alarms and timings. */
const clusterStates: fc.Arbitrary<ClusterState> = fc.record({
  desiredSize: fc.integer({ min: 1, max: 5 }), generation: fc.integer({ min: 1, max: 3 }),
  bootstrapped: fc.boolean(),
  podNames: someNames, claims: someNames, memberNames: fc.option(someNames, { nil: undefined }), answering: someNames,
  leader: fc.option(fc.constantFrom(...NAMES), { nil: undefined }), recordedMembers: someNames,
  silent: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 200_000 })),
  stranded: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 100_000 })),
  spreadTo: fc.option(fc.constant(['free']).map((f) => [...f]), { nil: undefined }),
  unclaimed: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 2_000_000 })),
  alarms: fc.array(fc.record({ memberId: fc.constantFrom('0', ...NAMES.map((n) => `id-${n}`)), alarm: fc.constantFrom<AlarmView['alarm']>('NOSPACE', 'CORRUPT') }), { maxLength: 2 }),
  targetVersion: fc.constantFrom(...VERSIONS), survivorPolicy: fc.option(fc.constantFrom('auto', 'a'), { nil: undefined }),
  rebuildFrom: fc.option(fc.constant({ backup: 'b', path: 'p', revision: 5 }), { nil: undefined }),
  hashes: fc.option(fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 1, max: 3 })), { nil: undefined }),
  // Claims a deleted cluster of the name left: rare, as in life, so that most states exercise the other rules.
  retained: fc.oneof({ weight: 4, arbitrary: fc.constant<RetainedClaim[]>([]) }, { weight: 1, arbitrary: fc.uniqueArray(fc.record<RetainedClaim>({ name: fc.constantFrom('p', 'q', 'r'), removed: fc.boolean() }), { selector: (c) => c.name, maxLength: 3 }) }),
}).chain((g) => fc.record({
  pods: fc.tuple(...g.podNames.map(podOf)),
  members: g.memberNames === undefined ? fc.constant(undefined) : fc.tuple(...g.memberNames.map(memberOf)),
  health: fc.tuple(...(g.memberNames ?? []).filter((n) => g.answering.includes(n)).map(healthOf)),
}).map(({ pods, members, health }): ClusterState => ({
  desiredSize: g.desiredSize, generation: g.generation, paused: false, bootstrapped: g.bootstrapped,
  pods, claims: g.claims, retained: g.retained, members, recordedMembers: g.recordedMembers,
  // Those that answer follow the leader, if there is one; a member that leads follows itself.
  health: health.map((h) => ({ ...h, isLeader: h.name === g.leader, leaderId: g.leader ? `id-${g.leader}` : '' })),
  supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: g.stranded, silentForMs: g.silent, unclaimedForMs: g.unclaimed, claimGraceMs: 600_000, learnerMaxLag: 100,
  targetVersion: g.targetVersion, targetConfig: '', alarms: g.alarms, quotaBackendBytes: 2 ** 31,
  ...(g.survivorPolicy ? { survivorPolicy: g.survivorPolicy } : {}),
  ...(g.spreadTo ? { spreadTo: g.spreadTo } : {}),
  ...(g.rebuildFrom ? { rebuildFrom: g.rebuildFrom } : {}),
  ...(g.hashes ? { corruptionCheck: { revision: 50, hashes: g.hashes } } : {}),
})));

for (const [name, holds] of Object.entries(INVARIANTS)) {
  test(`planner invariant, over 5,000 generated states: ${name}`, () => {
    fc.assert(fc.property(clusterStates, (s) => {
      const action = plan(s);
      assert.ok(holds(s, action), `${name}: ${JSON.stringify(action)}`);
    }), { numRuns: 5000 });
  });
}

test('a member whose stopping pod found its volume empty is not restarted on it (the counterexample of seed 2093520639)', () => {
  const pod = (name: string): PodView => ({ name, phase: 'Pending', ready: false, terminating: true, version: '3.5.17', config: '', forced: false, dataLost: true });
  const s: ClusterState = {
    desiredSize: 5, paused: false, bootstrapped: true, pods: [pod('b'), pod('e')], claims: ['b'], retained: [],
    members: [{ id: 'id-b', name: 'b', isLearner: false, started: true }], recordedMembers: [],
    health: [{ name: 'b', isLeader: false, leaderId: '', dbSizeInUse: 0, raftIndex: 0, revision: 1, dbSize: 0 }],
    supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: {}, silentForMs: { b: 108_000 }, unclaimedForMs: {}, claimGraceMs: 600_000, learnerMaxLag: 100,
    targetVersion: '3.6.5', targetConfig: '', alarms: [], quotaBackendBytes: 2 ** 31,
  };
  const action = plan(s);
  const holds = INVARIANTS['never restart a member on a volume that came back empty'];
  assert.ok(holds?.(s, action), JSON.stringify(action));
});

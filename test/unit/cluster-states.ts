// Generated cluster states for the planner's property tests (planner-invariants, planner-liveness).
import fc from 'fast-check';
import type { AlarmView, ClusterState, MemberHealth, MemberView, PodView, RetainedClaim } from '../../src/etcd/planner.js';

export const NAMES = ['a', 'b', 'c', 'd', 'e'] as const;
const VERSIONS = ['3.5.17', '3.6.5'];
/** The nodes pods are generated on; n4 holds none. */
const NODES = ['n1', 'n2', 'n3'] as const;

/** The digests of the spec's pod template and pod metadata in generated states. */
const TEMPLATE = 't';
const METADATA = 'm';

/** Some of the names, in order. */
const someNames: fc.Arbitrary<string[]> = fc.subarray<string>([...NAMES]);

const podOf = (name: string): fc.Arbitrary<PodView> => fc.record({
  phase: fc.constantFrom<PodView['phase']>('Pending', 'Running', 'Running', 'Failed', 'Unknown'),
  ready: fc.boolean(), terminating: fc.boolean(), version: fc.constantFrom(...VERSIONS), config: fc.constantFrom('', 'x'),
  // Mostly on the spec's pod template and metadata (TEMPLATE, METADATA); sometimes a pod of an earlier version without the record.
  template: fc.constantFrom(TEMPLATE, TEMPLATE, TEMPLATE, 'old'), unrecorded: fc.integer({ min: 0, max: 4 }).map((n) => n === 0),
  metadata: fc.constantFrom(METADATA, METADATA, METADATA, 'old'),
  forced: fc.constant(false), dataLost: fc.integer({ min: 0, max: 9 }).map((n) => n === 0), bootstrap: fc.option(someNames, { nil: undefined }),
  neverRan: fc.boolean(), specGeneration: fc.integer({ min: 1, max: 3 }),
  // Its node's state: mostly fine, sometimes lost (NotReady), sometimes being drained; two members may share one.
  // Or no node at all: the scheduler finds none that fits, and it waits, Pending, never having run.
  node: fc.constantFrom('fine', 'fine', 'fine', 'lost', 'draining', 'unschedulable'), on: fc.constantFrom(...NODES),
}).map(({ bootstrap, neverRan, node, on, unrecorded, ...p }): PodView => {
  const pod = { name, ...p, ...(neverRan ? { neverRan } : {}), ...(unrecorded ? { templateUnrecorded: true as const } : {}), ...(bootstrap && bootstrap.length > 0 ? { bootstrapMembers: bootstrap } : {}) };
  if (node === 'unschedulable') return { ...pod, phase: 'Pending', ready: false, neverRan: true, unschedulable: true };
  return { ...pod, node: on, ...(node === 'lost' ? { nodeLost: true as const } : node === 'draining' ? { nodeDraining: true as const } : {}) };
});

const memberOf = (name: string): fc.Arbitrary<MemberView> =>
  fc.record({ isLearner: fc.boolean(), started: fc.boolean() }).map((m) => ({ id: `id-${name}`, name, ...m }));

/** A member of a running cluster: started, a learner now and then. */
const runningMemberOf = (name: string): fc.Arbitrary<MemberView> =>
  fc.integer({ min: 0, max: 3 }).map((n) => ({ id: `id-${name}`, name, isLearner: n === 0, started: true }));

const healthOf = (name: string): fc.Arbitrary<MemberHealth> => fc.record({
  raftIndex: fc.integer({ min: 0, max: 3000 }), revision: fc.integer({ min: 1, max: 1000 }), dbSize: fc.integer({ min: 0, max: 2 ** 31 }),
}).map((h) => ({ name, isLeader: false, leaderId: '', dbSizeInUse: Math.floor(h.dbSize / 2), ...h }));

/**
 * A claim a deleted cluster of the name left: of one of two earlier incarnations (u1 made before u2) or of
 * one that cannot be told (a claim of an early version without the cluster's UID), its member removed or
 * not, never run on or not.
 */
const retainedClaim: fc.Arbitrary<RetainedClaim> = fc.record({
  name: fc.constantFrom('p', 'q', 'r', 's'), removed: fc.boolean(), incarnation: fc.constantFrom('u1', 'u2', ''), neverRan: fc.boolean(),
  after: fc.integer({ min: 0, max: 999 }),
}).map(({ after, ...c }) => ({ ...c, createdMs: (c.incarnation === 'u1' ? 1000 : c.incarnation === 'u2' ? 2000 : 0) + after }));

/**
 * Cluster states of up to five members, any mix of pods (on live, lost or draining nodes, their data lost or
 * not), claims (never run on, set aside, recording a bootstrap), claims of earlier incarnations, members,
 * answers, alarms and timings, with or without the membership status records. One in four is a running
 * cluster: bootstrapped, each listed member on a pod of its own, every one started: the rules that repair a
 * running cluster (a CORRUPT alarm with a silent voter, a learner that answers but does not catch up, a voter
 * lagging in a roll) act only once all that lines up, which the free mix seldom does.
 */
export const clusterStates: fc.Arbitrary<ClusterState> = fc.record({
  desiredSize: fc.integer({ min: 1, max: 5 }), generation: fc.integer({ min: 1, max: 3 }),
  running: fc.oneof({ weight: 3, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) }),
  // Pods the CoreOS operator made: none mostly; now and then all (a cluster to take over, its operator perhaps still
  // running), all of a settled cluster (each a started voter that answers one leader, nothing stopping, no claim: one
  // ready to take over), or some beside others.
  coreos: fc.constantFrom('none', 'none', 'none', 'none', 'none', 'all', 'all', 'some', 'settled'),
  coreosOperatorActivity: fc.oneof({ weight: 3, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.constant('renewed 3 s ago') }),
  bootstrapped: fc.boolean(),
  podNames: someNames, claims: someNames, memberNames: fc.option(someNames, { nil: undefined }), answering: someNames,
  leader: fc.option(fc.constantFrom(...NAMES), { nil: undefined }),
  // No membership recorded at all (status of an earlier version, an adopted cluster) as often as some.
  recordedMembers: fc.oneof(fc.constant<string[]>([]), someNames),
  neverRan: someNames, started: someNames, setAside: fc.oneof({ weight: 3, arbitrary: fc.constant<string[]>([]) }, { weight: 1, arbitrary: someNames }),
  claimedBootstrap: fc.option(someNames.filter((b) => b.length > 0), { nil: undefined }),
  silent: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 200_000 })),
  stranded: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 100_000 })),
  stopping: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 600_000 })),
  // How long a member behind its leader has come no closer, on either side of the 600 s bound.
  stalled: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 1_200_000 })),
  spreadTo: fc.option(fc.constant(['free']).map((f) => [...f]), { nil: undefined }),
  // Under a hard one-member-per-node rule (antiAffinity), the nodes that can take a member; none of them lost or drained.
  placeable: fc.option(fc.subarray([...NODES, 'n4']), { nil: undefined }),
  unclaimed: fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 0, max: 2_000_000 })),
  alarms: fc.array(fc.record({ memberId: fc.constantFrom('0', ...NAMES.map((n) => `id-${n}`)), alarm: fc.constantFrom<AlarmView['alarm']>('NOSPACE', 'CORRUPT') }), { maxLength: 2 }),
  targetVersion: fc.constantFrom(...VERSIONS), survivorPolicy: fc.option(fc.constantFrom('auto', 'a'), { nil: undefined }),
  rebuildFrom: fc.option(fc.constant({ backup: 'b', path: 'p', revision: 5 }), { nil: undefined }),
  // A NOSPACE recovery part done, or done (the data may fill the quota still: dbSize reaches it in some states).
  noSpaceDisarmedForMs: fc.option(fc.integer({ min: 0, max: 120_000 }), { nil: undefined }),
  noSpaceRecovery: fc.option(fc.record({ compactedRevision: fc.integer({ min: 1, max: 1000 }), defragmented: fc.subarray([...NAMES]) }), { nil: undefined }),
  rebuild: fc.oneof({ weight: 6, arbitrary: fc.constant(undefined) }, { weight: 1, arbitrary: fc.record({ cleared: fc.boolean() }) }),
  // HashKV answers: any, or (as mostly in life) the same from every member that answers.
  hashes: fc.option(fc.oneof(fc.constant('agree' as const), fc.dictionary(fc.constantFrom(...NAMES), fc.integer({ min: 1, max: 3 }))), { nil: undefined }),
  // Claims a deleted cluster of the name left: rare, as in life, so that most states exercise the other rules.
  retained: fc.oneof({ weight: 4, arbitrary: fc.constant<RetainedClaim[]>([]) }, { weight: 1, arbitrary: fc.uniqueArray(retainedClaim, { selector: (c) => c.name, maxLength: 4 }) }),
}).map((g) => (g.coreos === 'settled'
  ? { ...g, running: true, memberNames: g.podNames, answering: g.podNames, leader: g.podNames[0], claims: [] as string[], bootstrapped: false }
  : { ...g, memberNames: g.running ? g.podNames : g.memberNames, bootstrapped: (g.running && g.coreos !== 'all') || g.bootstrapped })).chain((g) => fc.record({
  pods: fc.tuple(...g.podNames.map(podOf)).map((pods) => pods.map((p, i) => {
    if (g.coreos === 'settled') return { ...p, terminating: false, madeByCoreOS: true as const };
    return g.coreos === 'all' || (g.coreos === 'some' && i % 2 === 0) ? { ...p, madeByCoreOS: true as const } : p;
  })),
  members: g.memberNames === undefined ? fc.constant(undefined)
    : fc.tuple(...g.memberNames.map(g.coreos === 'settled' ? (n: string) => fc.constant({ id: `id-${n}`, name: n, isLearner: false, started: true }) : g.running ? runningMemberOf : memberOf)),
  health: fc.tuple(...(g.memberNames ?? []).filter((n) => g.answering.includes(n)).map(healthOf)),
}).map(({ pods, members, health }): ClusterState => ({
  desiredSize: g.desiredSize, generation: g.generation, paused: false, bootstrapped: g.bootstrapped,
  // The operator reads the CoreOS lock only for clusters that operator made.
  ...(g.coreosOperatorActivity && g.coreos !== 'none' ? { coreosOperatorActivity: g.coreosOperatorActivity } : {}),
  pods, claims: g.claims, retained: g.retained, members, recordedMembers: g.recordedMembers,
  claimMarks: {
    // A claim says its member never ran, or that it did, or (an earlier version's) nothing.
    neverRan: g.neverRan.filter((n) => g.claims.includes(n)), started: g.started.filter((n) => g.claims.includes(n) && !g.neverRan.includes(n)),
    setAside: g.setAside.filter((n) => g.claims.includes(n)),
    ...(g.claimedBootstrap ? { bootstrapMembers: g.claimedBootstrap } : {}),
  },
  // Those that answer follow the leader, if there is one; a member that leads follows itself.
  health: health.map((h) => ({ ...h, isLeader: h.name === g.leader, leaderId: g.leader ? `id-${g.leader}` : '' })),
  supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: g.stranded, silentForMs: g.silent, stoppingForMs: g.stopping, stuckStoppingAfterMs: 300_000, unclaimedForMs: g.unclaimed, claimGraceMs: 600_000, learnerMaxLag: 100,
  stalledForMs: g.stalled, stalledAfterMs: 600_000,
  targetVersion: g.targetVersion, targetConfig: '', targetTemplate: TEMPLATE, targetMetadata: METADATA, alarms: g.alarms, quotaBackendBytes: 2 ** 31,
  ...(g.survivorPolicy ? { survivorPolicy: g.survivorPolicy } : {}),
  ...(g.spreadTo ? { spreadTo: g.spreadTo } : {}),
  ...(g.placeable ? { placeableNodes: g.placeable.filter((n) => !pods.some((p) => p.node === n && (p.nodeLost || p.nodeDraining))) } : {}),
  ...(g.rebuildFrom ? { rebuildFrom: g.rebuildFrom } : {}),
  ...(g.rebuild ? { rebuild: g.rebuild } : {}),
  ...(g.noSpaceRecovery ? { noSpaceRecovery: g.noSpaceRecovery } : {}),
  ...(g.noSpaceDisarmedForMs !== undefined ? { noSpaceDisarmedForMs: g.noSpaceDisarmedForMs } : {}),
  ...(g.hashes ? { corruptionCheck: { revision: 50, hashes: g.hashes === 'agree' ? Object.fromEntries(health.map((h) => [h.name, 1])) : g.hashes } } : {}),
})));

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterStatus } from '../../src/controllers/cluster/status.js';
import { podView } from '../../src/controllers/cluster/views.js';
import { conditionEvents } from '../../src/controllers/cluster/condition-events.js';
import type { ClusterState } from '../../src/etcd/planner.js';
import { NOW, cluster, h, reports, state } from './status-fixtures.js';

const cond = (s: ReturnType<typeof clusterStatus>, type: string): string | undefined => s.conditions?.find((c) => c.type === type)?.status;

test('a healthy cluster is Running, Available, not Progressing, not Degraded', () => {
  const s = clusterStatus(cluster(), state(), { type: 'Steady' }, reports(['3.5.17', '3.5.17']), NOW);
  assert.equal(s.phase, 'Running');
  assert.deepEqual([cond(s, 'Available'), cond(s, 'Progressing'), cond(s, 'Degraded')], ['True', 'False', 'False']);
  assert.deepEqual(s.members, { ready: ['a', 'b', 'c'], unready: [] });
  assert.equal(s.leader, 'a');
  assert.equal(s.currentVersion, '3.5.17');
  assert.equal(s.targetVersion, '3.5.17', 'the leading v is dropped');
  assert.equal(s.observedGeneration, 4);
  assert.equal(s.selector, 'app=etcd,etcd_cluster=ex');
  assert.equal(s.serviceName, 'ex-client');
});

test('phases follow what the cluster is doing', () => {
  assert.equal(clusterStatus(cluster({ status: {} }), state({ bootstrapped: false }), { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, new Map(), NOW).phase, 'Creating');
  const starting = state({ pods: state().pods.map((p) => ({ ...p, ready: p.name === 'a' })) });
  const creating = cluster({ status: { phase: 'Creating', bootstrapped: true } });
  assert.equal(clusterStatus(creating, starting, { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, new Map(), NOW).phase, 'Creating', 'bootstrapped, members not all ready yet');
  assert.equal(clusterStatus(cluster({ status: { phase: 'Running', bootstrapped: true } }), starting, { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, new Map(), NOW).phase, 'Recovering', 'once Running, unready members are a recovery');
  assert.equal(clusterStatus(cluster(), state({ desiredSize: 5 }), { type: 'AddMember', learner: true, version: '3.5.17', reason: 'scaling up to 5' }, new Map(), NOW).phase, 'Scaling');
  assert.equal(clusterStatus(cluster(), state(), { type: 'Paused' }, new Map(), NOW).phase, 'Paused');
  const lost = clusterStatus(cluster(), state(), { type: 'QuorumLost', reason: '2 of 3 members are gone' }, new Map(), NOW);
  assert.equal(lost.phase, 'Failed');
  assert.equal(lost.reason, '2 of 3 members are gone');
  assert.equal(cond(lost, 'Degraded'), 'True');
});

test('without a healthy quorum the cluster is not Available; unready members make it Degraded', () => {
  const s = clusterStatus(cluster(), state({ health: [h('a', { raftIndex: 1 })] }), { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'quorum lost' }, new Map(), NOW);
  assert.equal(cond(s, 'Available'), 'False');
  const pods = state().pods.map((p) => (p.name === 'c' ? { ...p, ready: false } : p));
  const degraded = clusterStatus(cluster(), state({ pods }), { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'member c is not ready' }, new Map(), NOW);
  assert.equal(cond(degraded, 'Degraded'), 'True');
  assert.deepEqual(degraded.members?.unready, ['c']);
  assert.equal(degraded.phase, 'Recovering');
});

test('members that all answer but agree on no leader are not Available, nor is a leader only a minority follows (issue 32, finding 3)', () => {
  const noLeader = clusterStatus(cluster(), state({ health: ['a', 'b', 'c'].map((n) => h(n, { leaderId: '' })) }), { type: 'Steady' }, new Map(), NOW);
  assert.equal(cond(noLeader, 'Available'), 'False');
  assert.equal(noLeader.conditions?.find((c) => c.type === 'Available')?.reason, 'NoLeader');
  assert.equal(noLeader.leader, undefined);
  // a says it leads, but b and c follow a leader of their own (c, stale): no quorum behind a.
  const split = clusterStatus(cluster(), state({ health: [h('a', { isLeader: true }), h('b', { leaderId: 'c' }), h('c', { leaderId: 'c' })] }), { type: 'Steady' }, new Map(), NOW);
  assert.equal(cond(split, 'Available'), 'False');
  const served = clusterStatus(cluster(), state({ health: [h('a', { isLeader: true }), h('b'), h('c', { leaderId: '' })] }), { type: 'Steady' }, new Map(), NOW);
  assert.equal(cond(served, 'Available'), 'True', 'two of three following a is a quorum');
  assert.equal(served.conditions?.find((c) => c.type === 'Available')?.message, '2 of 3 members healthy, following leader a');
  assert.equal(served.leader, 'a');
});

test('a plan that needs a person is Degraded under its cause, saying what to do; nothing is Progressing', () => {
  const blocked = { type: 'Blocked' as const, cause: 'RetainedClaimsRemoved' as const, reason: 'claims x of a deleted cluster … delete them' };
  const s = clusterStatus(cluster({ status: {} }), state({ bootstrapped: false, members: undefined, health: [], pods: [] }), blocked, new Map(), NOW);
  assert.deepEqual(s.conditions?.filter((c) => c.type === 'Degraded' || c.type === 'Progressing').map((c) => [c.type, c.status, c.reason, c.message]), [
    ['Progressing', 'False', 'Blocked', blocked.reason],
    ['Degraded', 'True', 'RetainedClaimsRemoved', blocked.reason],
  ]);
});

test('a running cluster whose plan needs a person is not Running (issue 32, review 8)', () => {
  const blocked = { type: 'Blocked' as const, cause: 'NodeLost' as const, reason: 'member c answers but its node n3 is lost' };
  const s = clusterStatus(cluster({ status: { phase: 'Running', bootstrapped: true } }), state(), blocked, reports(['3.5.17', '3.5.17']), NOW);
  assert.equal(s.phase, 'Recovering');
  assert.equal(cond(s, 'Degraded'), 'True');
});

test('a condition keeps its transition time while its status holds', () => {
  const first = clusterStatus(cluster(), state(), { type: 'Steady' }, new Map(), NOW);
  const later = clusterStatus(cluster({ status: first }), state(), { type: 'Steady' }, new Map(), '2026-11-22T01:00:00Z');
  assert.equal(later.conditions?.find((c) => c.type === 'Available')?.lastTransitionTime, NOW);
});

test('pod views: readiness, terminating, the bootstrap a pod came from and its version', () => {
  const view = podView({
    metadata: {
      name: 'p', creationTimestamp: new Date(0), deletionTimestamp: new Date(5),
      annotations: { 'etcd.database.coreos.com/initial-cluster': 'p,q', 'etcd.version': '3.6.5', 'etcd.database.coreos.com/config': 'abc', 'etcd.database.coreos.com/spec-generation': '2' },
    },
    status: {
      phase: 'Running', conditions: [{ type: 'Ready', status: 'False', lastTransitionTime: new Date(1000) }],
      containerStatuses: [{ name: 'etcd', image: 'etcd', imageID: '', ready: false, restartCount: 0, state: { running: {} } }],
    },
  });
  assert.deepEqual(view, { name: 'p', phase: 'Running', ready: false, terminating: true, bootstrapMembers: ['p', 'q'], version: '3.6.5', config: 'abc', forced: false, dataLost: false, specGeneration: 2, runAsUser: 0 });
  assert.equal(podView({ metadata: { name: 'p' }, status: { phase: 'Pending' } }).neverRan, true, 'a pod whose etcd has no status yet never ran');
});

test('status tells what is observed: members that do not answer are not "all ready"; a pod that cannot run is named with its cause', () => {
  // Every pod of a bootstrap pending, no member answering: the old status said "all members ready".
  const pending = state({ bootstrapped: false, members: undefined, health: [], pods: state().pods.map((p) => ({ ...p, phase: 'Pending', ready: false })) });
  const creating = clusterStatus(cluster({ status: {} }), pending, { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'bootstrapping: 0 of 3 members started' }, new Map(), NOW);
  assert.equal(cond(creating, 'Degraded'), 'True');
  assert.equal(creating.readyMembers, 0);
  assert.deepEqual(creating.members?.unready, ['a', 'b', 'c']);
  const none = clusterStatus(cluster({ status: {} }), state({ bootstrapped: false, members: undefined, health: [], pods: [] }), { type: 'Bootstrap', size: 3, version: '3.5.17' }, new Map(), NOW);
  assert.equal(none.conditions?.find((c) => c.type === 'Degraded')?.reason, 'NoMembers');
  const trouble = { reason: 'ImagePullFailed', message: 'member pod a cannot pull image quay.io/coreos/etcd:v3.9.9' };
  const pulling = clusterStatus(cluster(), state({ pods: pending.pods.map((p) => (p.name === 'a' ? { ...p, trouble } : p)) }), { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, new Map(), NOW);
  assert.deepEqual(pick(pulling.conditions?.find((c) => c.type === 'Degraded')), { status: 'True', ...trouble });
  const refused = clusterStatus(cluster(), state(), { type: 'AddMember', learner: true, version: '3.5.17', reason: 'scaling up to 4' }, new Map(), NOW,
    { refusal: { reason: 'Refused', message: 'creating pod x: 403 Forbidden' } });
  assert.deepEqual(pick(refused.conditions?.find((c) => c.type === 'Degraded')), { status: 'True', reason: 'Refused', message: 'creating pod x: 403 Forbidden' });
  const ready = clusterStatus(cluster(), state(), { type: 'Steady' }, new Map(), NOW);
  assert.deepEqual(pick(ready.conditions?.find((c) => c.type === 'Degraded')), { status: 'False', reason: 'AllMembersReady', message: 'all 3 members ready' });
});

test('members sharing a node are said to, naming them and the node', () => {
  const on = (nodes: string[]): ClusterState => state({ pods: state().pods.map((p, i) => ({ ...p, node: nodes[i] ?? '' })) });
  const spread = clusterStatus(cluster(), on(['n1', 'n2', 'n3']), { type: 'Steady' }, new Map(), NOW);
  assert.deepEqual(pick(spread.conditions?.find((c) => c.type === 'MembersSpread')), { status: 'True', reason: 'OnePerNode', message: 'no two members share a node, and no zone holds a quorum of them' });
  // A pod not yet on a node says nothing of the spread (trial of issue 32).
  const pending = state({ pods: state().pods.map((p, i) => (i === 2 ? { ...p, phase: 'Pending' as const } : { ...p, node: `n${i}` })) });
  assert.deepEqual(pick(clusterStatus(cluster(), pending, { type: 'Steady' }, new Map(), NOW).conditions?.find((c) => c.type === 'MembersSpread')),
    { status: 'Unknown', reason: 'NotScheduled', message: 'member pods c are not on a node yet' });
  const zoned = (zones: string[]): ClusterState => state({ pods: state().pods.map((p, i) => ({ ...p, node: `n${i}`, zone: zones[i] ?? '' })) });
  assert.deepEqual(pick(clusterStatus(cluster(), zoned(['z1', 'z2', 'z1']), { type: 'Steady' }, new Map(), NOW).conditions?.find((c) => c.type === 'MembersSpread')),
    { status: 'False', reason: 'QuorumInOneZone', message: '2 of the 3 voters run in zone z1 (a, c), a quorum: losing that zone stops the cluster' });
  assert.equal(clusterStatus(cluster(), zoned(['z1', 'z2', 'z3']), { type: 'Steady' }, new Map(), NOW).conditions?.find((c) => c.type === 'MembersSpread')?.status, 'True');
  // Two of three on one node are a quorum there; a learner beside a voter only shares the node.
  const shared = clusterStatus(cluster(), on(['n2', 'n1', 'n2']), { type: 'Steady' }, new Map(), NOW);
  assert.deepEqual(pick(shared.conditions?.find((c) => c.type === 'MembersSpread')),
    { status: 'False', reason: 'QuorumOnOneNode', message: '2 of the 3 voters run on node n2 (a, c), a quorum: losing that node stops the cluster' });
  const learner = state({ pods: [...on(['n2', 'n1', 'n3']).pods, ...on(['n2']).pods.slice(0, 1).map((p) => ({ ...p, name: 'd' }))],
    members: [...state().members ?? [], { id: 'd', name: 'd', isLearner: true, started: true }] });
  assert.deepEqual(pick(clusterStatus(cluster(), learner, { type: 'Steady' }, new Map(), NOW).conditions?.find((c) => c.type === 'MembersSpread')),
    { status: 'False', reason: 'SharedNode', message: 'members share a node: a, d on n2; losing that node loses them together' });
});

test('a quorum of the voters on one node or in one zone is told apart from the best spread there is (issue 32, finding 14)', () => {
  /** Five voters a…e (and any learners), each placed as [node, zone]. */
  const placed = (where: [string, string][], learners: string[] = []): ClusterState => {
    const names = where.map((_, i) => String.fromCharCode(97 + i));
    return state({
      desiredSize: 5,
      pods: names.map((name, i) => ({ name, phase: 'Running', ready: true, terminating: false, version: '3.5.17', config: '', template: '', metadata: '', forced: false, dataLost: false, node: where[i]?.[0] ?? '', zone: where[i]?.[1] ?? '' })),
      members: names.map((name) => ({ id: name, name, isLearner: learners.includes(name), started: true })),
      recordedMembers: names,
    });
  };
  const spread = (s: ClusterState): ReturnType<typeof pick> => pick(clusterStatus(cluster(), s, { type: 'Steady' }, new Map(), NOW).conditions?.find((c) => c.type === 'MembersSpread'));
  // Five on three zones, three of them in z1 (a and b sharing n1): it used to say only SharedNode, as for 2, 2, 1.
  assert.deepEqual(spread(placed([['n1', 'z1'], ['n1', 'z1'], ['n2', 'z1'], ['n3', 'z2'], ['n4', 'z3']])),
    { status: 'False', reason: 'QuorumInOneZone', message: '3 of the 5 voters run in zone z1 (a, b, c), a quorum: losing that zone stops the cluster' });
  assert.deepEqual(spread(placed([['n1', 'z1'], ['n1', 'z1'], ['n1', 'z1'], ['n2', 'z2'], ['n3', 'z3']])),
    { status: 'False', reason: 'QuorumOnOneNode', message: '3 of the 5 voters run on node n1 (a, b, c), a quorum: losing that node stops the cluster' });
  // The best five on three nodes and zones can do keeps the milder reason.
  assert.deepEqual(spread(placed([['n1', 'z1'], ['n1', 'z1'], ['n2', 'z2'], ['n2', 'z2'], ['n3', 'z3']])),
    { status: 'False', reason: 'SharedNode', message: 'members share a node: a, b on n1; c, d on n2; losing that node loses them together' });
  // A learner casts no vote: three pods in z1, one of them a learner, are two of four voters, no quorum.
  assert.equal(spread(placed([['n1', 'z1'], ['n2', 'z1'], ['n3', 'z1'], ['n4', 'z2'], ['n5', 'z3']], ['c'])).reason, 'OnePerNode');
  assert.equal(spread(placed([['n1', 'z1']])).reason, 'OnePerNode', 'one member is a quorum wherever it runs');
  // Told as a Warning Event when it appears, and when the riskier reason replaces the milder one.
  const best = clusterStatus(cluster(), placed([['n1', 'z1'], ['n1', 'z1'], ['n2', 'z2'], ['n2', 'z2'], ['n3', 'z3']]), { type: 'Steady' }, new Map(), NOW);
  const worse = clusterStatus(cluster({ status: best }), placed([['n1', 'z1'], ['n1', 'z1'], ['n1', 'z1'], ['n2', 'z2'], ['n3', 'z3']]), { type: 'Steady' }, new Map(), NOW);
  assert.deepEqual(conditionEvents(best, worse).map((e) => [e.type, e.reason]), [['Warning', 'QuorumOnOneNode']]);
});

const pick = (c: { status: string; reason?: string; message?: string } | undefined): { status?: string; reason?: string; message?: string } =>
  ({ status: c?.status, reason: c?.reason, message: c?.message });

test('pod views: a data guard (or a restore\'s fetch step) that refused (exit 3), now or last time, says the data is lost; a guard that crashed otherwise does not', () => {
  const guarded = (terminated: { exitCode: number }, last: boolean, step = 'data-guard'): boolean => podView({
    metadata: { name: 'p' },
    status: { phase: 'Pending', initContainerStatuses: [{ name: step, image: 'i', imageID: '', ready: false, restartCount: 1,
      ...(last ? { state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated } } : { state: { terminated } }) }] },
  }).dataLost;
  assert.equal(guarded({ exitCode: 3 }, false), true);
  assert.equal(guarded({ exitCode: 3 }, true), true);
  assert.equal(guarded({ exitCode: 1 }, true), false);
  assert.equal(guarded({ exitCode: 0 }, false), false);
  assert.equal(guarded({ exitCode: 3 }, true, 'fetch-snapshot'), true, 'a restored member whose data is gone since');
  assert.equal(guarded({ exitCode: 4 }, true, 'fetch-snapshot'), false, 'a backup refused is no data lost');
});

test('while members roll to a new version the phase is Upgrading; a refused version says why', () => {
  const pods = ['a', 'b', 'c'].map((name, i) => ({ name, phase: 'Running' as const, ready: true, terminating: false, version: i === 0 ? '3.5.35' : '3.5.17', config: '', template: '', metadata: '', forced: false, dataLost: false }));
  const rolling = clusterStatus(cluster({ spec: { size: 3, version: '3.5.35' } }), state({ pods, targetVersion: '3.5.35' }), { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, reports(['3.5.35', '3.5.17', '3.5.17']), NOW);
  assert.equal(rolling.phase, 'Upgrading');
  assert.deepEqual([rolling.currentVersion, rolling.targetVersion], ['3.5.17', '3.5.35']);
  assert.equal(cond(rolling, 'UpgradeRefused'), 'False');
  const refused = clusterStatus(cluster({ spec: { size: 3, version: '3.6.5' } }), state({ targetVersion: '3.6.5' }), { type: 'UpgradeRefused', reason: 'x' }, reports(['3.5.17']), NOW);
  assert.equal(refused.phase, 'Running', 'nothing is being done');
  const c = refused.conditions?.find((x) => x.type === 'UpgradeRefused');
  assert.ok(c);
  assert.equal(c.status, 'True');
  assert.equal(c.reason, 'PatchTooOld');
  assert.match(c.message ?? '', /3\.5\.32 or later/);
});

test('while members roll onto a changed spec.pod, the phase is Upgrading and Progressing says how many have rolled (issue 33)', () => {
  const podsOn = (templates: string[], terminating = ''): ClusterState['pods'] => state().pods.map((p, i) => ({ ...p, template: templates[i] ?? '', terminating: p.name === terminating }));
  const progressing = (st: ReturnType<typeof clusterStatus>): [string | undefined, string | undefined, string | undefined] => {
    const c = st.conditions?.find((x) => x.type === 'Progressing');
    return [c?.status, c?.reason, c?.message];
  };
  const restart = { type: 'DeletePod' as const, member: 'b', deleteClaim: false, reason: 'applying the changed spec.pod to b: restarting it on its data' };
  const first = clusterStatus(cluster(), state({ targetTemplate: 'new', pods: podsOn(['old', 'old', 'old']) }), restart, reports(['3.5.17']), NOW);
  assert.equal(first.phase, 'Upgrading');
  assert.deepEqual(progressing(first), ['True', 'RollingSpec', 'members rolled 0 of 3; applying the changed spec.pod to b: restarting it on its data']);
  // b's pod stopping is not rolled yet; made again on the new template, it is, ready or not.
  const stopping = clusterStatus(cluster(), state({ targetTemplate: 'new', pods: podsOn(['old', 'old', 'old'], 'b') }), { type: 'Wait', awaiting: 'PodStopping', members: ['b'], reason: 'x' }, new Map(), NOW);
  assert.deepEqual(progressing(stopping), ['True', 'RollingSpec', 'members rolled 0 of 3; x']);
  const next = clusterStatus(cluster(), state({ targetTemplate: 'new', pods: podsOn(['old', 'new', 'old']) }), { ...restart, member: 'c' }, new Map(), NOW);
  assert.equal(progressing(next)[2]?.startsWith('members rolled 1 of 3; '), true);
  const done = clusterStatus(cluster(), state({ targetTemplate: 'new', pods: podsOn(['new', 'new', 'new']) }), { type: 'Steady' }, new Map(), NOW);
  assert.equal(done.phase, 'Running');
  assert.deepEqual(progressing(done).slice(0, 2), ['False', 'Steady']);
  // A version upgrade tells its progress the same way.
  const pods = state().pods.map((p) => ({ ...p, version: p.name === 'a' ? '3.5.35' : '3.5.17' }));
  const upgrade = clusterStatus(cluster(), state({ targetVersion: '3.5.35', pods }), { ...restart, reason: 'upgrading b to 3.5.35: restarting it on its data' }, new Map(), NOW);
  assert.deepEqual(progressing(upgrade), ['True', 'Upgrading', 'members rolled 1 of 3; upgrading b to 3.5.35: restarting it on its data']);
  // A minor downgrade is told as one.
  const down = state().pods.map((p) => ({ ...p, version: p.name === 'a' ? '3.5.35' : '3.6.5' }));
  const downgrade = clusterStatus(cluster(), state({ targetVersion: '3.5.35', pods: down }), { ...restart, reason: 'downgrading b to 3.5.35: restarting it on its data' }, new Map(), NOW);
  assert.deepEqual(progressing(downgrade), ['True', 'Downgrading', 'members rolled 1 of 3; downgrading b to 3.5.35: restarting it on its data']);
});

test('a patch of pod labels and annotations restarts nothing: Progressing while it is made, but the cluster is Running, not Recovering (issue 33)', () => {
  const st = clusterStatus(cluster({ status: { phase: 'Running', bootstrapped: true } }), state({ targetMetadata: 'new' }),
    { type: 'PatchPodMetadata', member: 'b', reason: 'applying the spec.pod labels and annotations: no restart' }, reports(['3.5.17']), NOW);
  assert.equal(st.phase, 'Running');
  const c = st.conditions?.find((x) => x.type === 'Progressing');
  assert.deepEqual([c?.status, c?.reason], ['True', 'PatchPodMetadata']);
});

test('a NOSPACE recovery records each step in status while the alarm lasts, and Degraded says so', () => {
  const alarms = [{ memberId: 'a', alarm: 'NOSPACE' as const }];
  const compacted = clusterStatus(cluster(), state({ alarms }), { type: 'Compact', revision: 40, reason: 'r' }, new Map(), NOW);
  assert.deepEqual(compacted.noSpaceRecovery, { compactedRevision: 40, defragmented: [] });
  assert.equal(compacted.conditions?.find((c) => c.type === 'Degraded')?.reason, 'AlarmNoSpace');
  assert.deepEqual(compacted.alarms, [{ member: 'a', alarm: 'NOSPACE' }]);
  const next = state({ alarms, noSpaceRecovery: { compactedRevision: 40, defragmented: ['b'] } });
  assert.deepEqual(clusterStatus(cluster(), next, { type: 'Defragment', member: 'c', reason: 'r' }, new Map(), NOW).noSpaceRecovery,
    { compactedRevision: 40, defragmented: ['b', 'c'] });
  const disarmed = clusterStatus(cluster(), next, { type: 'DisarmAlarms', alarms, reason: 'r' }, new Map(), NOW);
  assert.equal(disarmed.noSpaceRecovery, undefined);
  assert.equal(disarmed.noSpaceDisarmedAt, NOW, 'when, for the next recovery to wait its minute from');
  assert.equal(clusterStatus(cluster({ status: disarmed }), state(), { type: 'Steady' }, new Map(), '2026-01-01T00:00:00Z').noSpaceDisarmedAt, NOW, 'kept by later passes');
  assert.equal(compacted.noSpaceDisarmedAt, undefined);
});

test('each answering member’s report is in status', () => {
  const s = clusterStatus(cluster(), state(), { type: 'Steady' }, reports(['3.5.17', '3.5.17']), NOW);
  assert.deepEqual(s.memberStatus?.[0], {
    name: 'a', id: 'id0', version: '3.5.17', isLeader: true, isLearner: false, raftIndex: 9, raftTerm: 2, revision: 5, dbSize: 100, dbSizeInUse: 50,
  });
  assert.equal(s.memberStatus.find((m) => m.name === 'b')?.isLeader, false, 'b follows');
});

test('a rebuild from backup is recorded with the revisions lost, shown as Restoring, and completed at the bootstrap', () => {
  const before = cluster({ status: { bootstrapped: true, memberStatus: [{ name: 'a', revision: 150 }, { name: 'b', revision: 149 }] } });
  const started = clusterStatus(before, state(), { type: 'StartRebuild', from: { backup: 'nightly', path: 'p', revision: 100 }, reason: 'lost' }, new Map(), NOW);
  assert.equal(started.bootstrapped, false, 'the next members bootstrap from the snapshot');
  assert.deepEqual(started.rebuild, { backup: 'nightly', path: 'p', revision: 100, lostRevisions: 50, startedAt: NOW, cleared: false });
  assert.equal(started.phase, 'Restoring');
  assert.equal(started.conditions?.find((c) => c.type === 'Degraded')?.reason, 'RebuildingFromBackup');
  const cleared = clusterStatus(cluster({ status: started }), state({ bootstrapped: false }), { type: 'ClearedForRebuild' }, new Map(), NOW);
  assert.equal(cleared.rebuild?.cleared, true);
  const done = clusterStatus(cluster({ status: cleared }), state({ bootstrapped: false }), { type: 'MarkBootstrapped' }, new Map(), '2026-11-22T01:00:00Z');
  assert.equal(done.rebuild?.completedAt, '2026-11-22T01:00:00Z');
  assert.equal(done.bootstrapped, true);
});

test('the recorded membership follows etcd member list and is kept while no member answers', () => {
  const seen = clusterStatus(cluster(), state(), { type: 'Steady' }, reports(['3.5.17']), NOW);
  assert.deepEqual(seen.membership, ['a', 'b', 'c']);
  const blind = clusterStatus(cluster({ status: seen }), state({ members: undefined, health: [] }), { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, new Map(), NOW);
  assert.deepEqual(blind.membership, ['a', 'b', 'c']);
});

test('bootstrapped and NOSPACE progress never go back when the plan was made on a lagging cache (finding 5)', () => {
  // The plan saw an old copy; the stored status, read again after a conflict, is further along.
  const stale = state({ bootstrapped: false, alarms: [{ memberId: 'a', alarm: 'NOSPACE' }], noSpaceRecovery: { compactedRevision: 40, defragmented: [] } });
  const stored = cluster({ status: { bootstrapped: true, noSpaceRecovery: { compactedRevision: 40, defragmented: ['b', 'c'] } } });
  const waited = clusterStatus(stored, stale, { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, new Map(), NOW);
  assert.equal(waited.bootstrapped, true);
  assert.deepEqual(waited.noSpaceRecovery, { compactedRevision: 40, defragmented: ['b', 'c'] });
  const defragmented = clusterStatus(stored, stale, { type: 'Defragment', member: 'a', reason: 'x' }, new Map(), NOW);
  assert.deepEqual(defragmented.noSpaceRecovery?.defragmented, ['b', 'c', 'a']);
  const olderCompaction = clusterStatus(stored, stale, { type: 'Compact', revision: 30, reason: 'x' }, new Map(), NOW);
  assert.deepEqual(olderCompaction.noSpaceRecovery, { compactedRevision: 40, defragmented: ['b', 'c'] }, 'a compaction behind the recorded one records nothing');
  // Nor does a lagging copy that still says bootstrapped bring it back once a rebuild has cleared it.
  const rebuilding = cluster({ status: { bootstrapped: false, rebuild: { backup: 'b', path: 'p', revision: 5, startedAt: NOW, cleared: false } } });
  assert.equal(clusterStatus(rebuilding, state({ bootstrapped: true }), { type: 'Wait', awaiting: 'MembersAnswering', members: [], reason: 'x' }, new Map(), NOW).bootstrapped, false);
});

test('a cluster the CoreOS operator made: TakingOver and Available while it serves; recorded as taken over; its pods named until they roll', () => {
  const coreos = state({ bootstrapped: false, pods: state().pods.map((p) => ({ ...p, madeByCoreOS: true as const })) });
  const pending = clusterStatus(cluster({ status: {} }), coreos, { type: 'Blocked', cause: 'CoreOSOperatorRunning', reason: 'it may still run' }, reports(['3.5.17']), NOW);
  assert.deepEqual([pending.phase, pending.bootstrapped, cond(pending, 'Available'), cond(pending, 'Degraded')], ['TakingOver', false, 'True', 'True']);
  const patched = clusterStatus(cluster({ status: pending }), coreos, { type: 'TakeOver', members: ['a', 'b', 'c'], config: '', template: '', reason: 'r' }, reports(['3.5.17']), NOW);
  assert.deepEqual([patched.phase, patched.bootstrapped, patched.takenOver], ['TakingOver', false, undefined], 'not recorded before the pods are seen with their records');
  const recorded = clusterStatus(cluster({ status: patched }), coreos, { type: 'RecordTakeover', members: ['a', 'b', 'c'] }, reports(['3.5.17']), NOW);
  assert.deepEqual([recorded.phase, recorded.bootstrapped, recorded.takenOver], ['Running', true, { from: 'coreos-etcd-operator', at: NOW, members: ['a', 'b', 'c'] }]);
  assert.match(recorded.conditions?.find((c) => c.type === 'CoreOSPods')?.message ?? '', /members a, b, c run on the pods the CoreOS etcd-operator made/);
  // Kept across passes, and the condition goes once no CoreOS pod is left.
  const later = clusterStatus(cluster({ status: recorded }), state(), { type: 'Steady' }, reports(['3.5.17']), NOW);
  assert.deepEqual(later.takenOver, recorded.takenOver);
  assert.equal(cond(later, 'CoreOSPods'), undefined);
});

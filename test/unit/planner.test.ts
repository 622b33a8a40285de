import { test } from 'node:test';
import assert from 'node:assert/strict';
import { membersBehind, plan, quorum } from '../../src/etcd/planner.js';
import type { Action, ClusterState, MemberHealth, PodView, RetainedClaim } from '../../src/etcd/planner.js';
import { health, healthy, member, pod } from './planner-fixtures.js';

const type = (a: Action): string => a.type;
/** A claim of the deleted incarnation u1 of the cluster's name, whose member ran on it. */
const retainedClaim = (name: string, o: Partial<RetainedClaim> = {}): RetainedClaim => ({ name, removed: false, incarnation: 'u1', neverRan: false, createdMs: 1000, ...o });

test('quorum is a strict majority', () => {
  assert.deepEqual([1, 2, 3, 4, 5, 6, 7].map(quorum), [1, 2, 2, 3, 3, 4, 4]);
});

test('paused clusters get no action, whatever their state', () => {
  assert.deepEqual(plan({ ...healthy(['a']), paused: true, pods: [] }), { type: 'Paused' });
});

test('a cluster that never came up is bootstrapped with all its members at once', () => {
  assert.deepEqual(plan(healthy([], { desiredSize: 3, bootstrapped: false, members: undefined })), { type: 'Bootstrap', size: 3, version: '3.5.17' });
});

test('a restore from a backup\'s claim bootstraps one founder, and the others join it once it is up', () => {
  assert.deepEqual(plan(healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, singleFounder: true })), { type: 'Bootstrap', size: 1, version: '3.5.17' });
  assert.deepEqual(plan(healthy(['a'], { desiredSize: 3 })), { type: 'AddMember', learner: true, version: '3.5.17', reason: 'scaling up to 3' });
});

test('a bootstrap whose pods never ran is made again from a changed spec; the version rules judge only what ran (issue 17)', () => {
  const initial = ['a', 'b', 'c'];
  const pulling = initial.map((n) => pod(n, { bootstrapMembers: initial, ready: false, phase: 'Pending', version: '3.5.99', neverRan: true, specGeneration: 1 }));
  const fixed = healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, pods: pulling, generation: 2, targetVersion: '3.6.5' });
  assert.deepEqual(plan(fixed), { type: 'DeletePod', member: 'a', deleteClaim: false, reason: 'its etcd never ran; making it again from generation 2 of the spec' });
  // Made again on the version asked for: a version no member ran is no upgrade to judge.
  assert.equal((plan({ ...fixed, pods: pulling.slice(1) }) as { member?: string }).member, 'b', 'each outdated pod in turn');
  const remade = { ...fixed, pods: [pod('a', { bootstrapMembers: initial, ready: false, phase: 'Pending', version: '3.5.99', neverRan: true, specGeneration: 2 })] };
  assert.deepEqual(plan(remade), { type: 'ResumeBootstrap', initialMembers: initial, missing: ['b', 'c'], version: '3.6.5' });
  // Once one member has started, pods are never made again this way.
  const started = { ...fixed, members: [member('b')] };
  assert.equal(type(plan(started)), 'Wait');
  // Nor a pod of the current spec.
  assert.equal(type(plan({ ...fixed, generation: 1 })), 'Wait');
});

test('a bootstrap pod that failed for good before its etcd ran (evicted while a restore fetched its snapshot) is made again; one that ran is not', () => {
  const initial = ['a', 'b', 'c'];
  const starting = (n: string): PodView => pod(n, { bootstrapMembers: initial, ready: false, phase: 'Pending', neverRan: true, specGeneration: 1 });
  const evicted: PodView = { ...starting('b'), phase: 'Failed' };
  const s = healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, pods: [starting('a'), evicted, starting('c')], generation: 1 });
  assert.deepEqual(plan(s), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'its pod failed before its etcd ever ran; making it again' });
  assert.deepEqual(plan({ ...s, pods: [starting('a'), starting('c')] }), { type: 'ResumeBootstrap', initialMembers: initial, missing: ['b'], version: '3.5.17' });
  // Its etcd ran: whatever it holds is not thrown away by a bootstrap rule.
  const ran = { ...evicted };
  delete ran.neverRan;
  assert.equal(type(plan({ ...s, pods: [starting('a'), ran, starting('c')] })), 'Wait');
  // Nor once a member has started: something may have been acknowledged.
  assert.equal(type(plan({ ...s, members: [member('a')] })), 'Wait');
});

test('a bootstrap on volumes whose pods are all gone resumes from what its claims record, never waiting for ever (issue 32, finding 1)', () => {
  // A size-1 cluster whose only pod went before its etcd ran (a fixed spec.version, an eviction, a person).
  const single = healthy([], { desiredSize: 1, bootstrapped: false, members: undefined, claims: ['a'], claimMarks: { neverRan: ['a'], started: [], setAside: [], bootstrapMembers: ['a'] } });
  assert.deepEqual(plan(single), { type: 'ResumeBootstrap', initialMembers: ['a'], missing: ['a'], version: '3.5.17' });
  // Its old pod still stopping: made again once it is gone, not created against it pass after pass.
  assert.deepEqual(plan({ ...single, pods: [pod('a', { bootstrapMembers: ['a'], phase: 'Pending', neverRan: true, terminating: true })] }),
    { type: 'Wait', awaiting: 'PodStopping', members: ['a'], reason: 'pod a is stopping; the bootstrap makes it again once it is gone' });
  // Three pods deleted one by one to be made again from a newer spec: the last deletion leaves only claims.
  const initial = ['a', 'b', 'c'];
  const three = healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, claims: initial, claimMarks: { neverRan: initial, started: [], setAside: [], bootstrapMembers: initial } });
  assert.deepEqual(plan(three), { type: 'ResumeBootstrap', initialMembers: initial, missing: initial, version: '3.5.17' });
  // A claim whose member ran holds data: it is mounted again by its resumed pod, never taken for empty, and
  // never restored over (review 4).
  assert.deepEqual(plan({ ...three, claimMarks: { neverRan: ['b', 'c'], started: ['a'], setAside: [], bootstrapMembers: initial } }),
    { type: 'ResumeBootstrap', initialMembers: initial, missing: initial, ran: ['a'], version: '3.5.17' });
  // A claim of no recorded bootstrap whose member never ran (the operator stopped between a claim and its pod)
  // should hold nothing; the mark may be stale, so it is set aside, kept for the grace period (review 6).
  const stray = healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, claims: ['x'], claimMarks: { neverRan: ['x'], started: [], setAside: [] } });
  assert.deepEqual(plan(stray), { type: 'SetClaimAside', member: 'x', reason: 'a claim of no recorded bootstrap whose member never ran on it: kept for the grace period, never restarted' });
  assert.equal(plan({ ...stray, claimMarks: { neverRan: ['x'], started: [], setAside: ['x'] } }).type, 'Bootstrap');
  assert.equal(plan({ ...stray, claimMarks: { neverRan: [], started: [], setAside: [] } }).type, 'Blocked', 'one that may hold data is a person\'s to judge');
});

test('a bootstrap record on claims or pods is trusted only while every pod, live claim and listed member is one of its members (issue 32, review 2)', () => {
  // Founders b1, b2 were replaced by b4, b5 long ago; status is lost. The record still names b1, b2, b3.
  const initial = ['b1', 'b2', 'b3'];
  const s = healthy(['b3', 'b4', 'b5'], { bootstrapped: false, recordedMembers: [], pods: [pod('b3', { bootstrapMembers: initial }), pod('b4'), pod('b5')],
    claims: ['b1', 'b2', 'b3', 'b4', 'b5'], claimMarks: { neverRan: [], started: ['b1', 'b2', 'b3', 'b4', 'b5'], setAside: ['b1', 'b2'], bootstrapMembers: initial } });
  const blocked = plan(s);
  assert.equal((blocked as { cause?: string }).cause, 'UnrecordedBootstrap', JSON.stringify(blocked));
  assert.match((blocked as { reason: string }).reason, /"membership":\["b3","b4","b5"\]/);
  // All pods gone, no member answers: the claims alone still show members outside the record.
  assert.equal((plan({ ...s, pods: [], members: undefined, health: [] }) as { cause?: string }).cause, 'UnrecordedBootstrap');
  // The record's own members, and nothing else: the bootstrap resumes.
  assert.equal(plan({ ...s, pods: [], members: undefined, health: [], claims: initial, claimMarks: { neverRan: [], started: [], setAside: [], bootstrapMembers: initial } }).type, 'ResumeBootstrap');
});

test('a bootstrap interrupted after some pods were created resumes with the same initial cluster', () => {
  const initial = ['a', 'b', 'c'];
  const s = healthy([], { bootstrapped: false, members: undefined, pods: [pod('a', { bootstrapMembers: initial, ready: false })] });
  assert.deepEqual(plan(s), { type: 'ResumeBootstrap', initialMembers: initial, missing: ['b', 'c'], version: '3.5.17' });
});

test('a bootstrap is marked done once every initial member has started, answering or not', () => {
  const initial = ['a', 'b', 'c'];
  const pods = initial.map((n) => pod(n, { bootstrapMembers: initial }));
  const starting = healthy(initial, { bootstrapped: false, pods, members: [member('a'), member('b'), member('c', { started: false })] });
  assert.deepEqual(plan(starting), { type: 'Wait', awaiting: 'MembersStarting', members: ['c'], reason: 'bootstrapping: 2 of 3 members started' });
  assert.equal(type(plan({ ...starting, members: undefined })), 'Wait');
  assert.deepEqual(plan(healthy(initial, { bootstrapped: false, pods, health: [] })), { type: 'MarkBootstrapped' });
});

test('a bootstrap member that started is never recreated with state "new", even if its pod is gone', () => {
  const initial = ['a', 'b', 'c'];
  const pods = ['a', 'c'].map((n) => pod(n, { bootstrapMembers: initial }));
  const s = healthy(initial, { bootstrapped: false, pods, members: [member('a'), member('b'), member('c', { started: false })] });
  assert.deepEqual(plan(s), { type: 'Wait', awaiting: 'MembersStarting', members: ['c'], reason: 'bootstrapping: 2 of 3 members started' });
});

test('a bootstrapped cluster with no pods at all is never bootstrapped again', () => {
  const s = healthy(['a', 'b', 'c'], { pods: [], health: [] });
  const action = plan(s);
  assert.equal(action.type, 'QuorumLost');
  assert.notEqual(plan({ ...s, members: undefined }).type, 'Bootstrap');
});

test('no member answers and the pods are gone: the recorded members restart on their claims, one at a time, naming all of them as peers', () => {
  const s = healthy(['a', 'b', 'c'], { pods: [], health: [], members: undefined, claims: ['a', 'b', 'c'] });
  assert.deepEqual(plan(s), { type: 'CreatePod', member: 'a', version: '3.5.17', peers: ['a', 'b', 'c'], reason: 'no member answers and its pod is gone; restarting it on its data' });
  assert.equal((plan({ ...s, pods: [pod('a', { ready: false })] }) as { member?: string }).member, 'b', 'the next one, while the first is starting');
  assert.equal(type(plan({ ...s, pods: [pod('a', { terminating: true })] })), 'Wait', 'never beside a pod of the same name still stopping');
  assert.deepEqual(plan({ ...s, claims: ['x'] }), { type: 'QuorumLost', reason: '3 of 3 members are gone with their data; a majority is lost' },
    'a claim of a member not in the recorded membership is not started, and the members are gone');
});

test('all pods gone, claims intact, no membership recorded: the claims that say their member ran restart it; others are a person\'s word (issue 32, finding 9)', () => {
  // An operator upgraded from a version whose status had no membership, or an adopted cluster, after a power loss.
  const s = healthy(['a', 'b', 'c'], { pods: [], health: [], members: undefined, recordedMembers: [], claims: ['a', 'b', 'c'], claimMarks: { neverRan: [], started: ['a', 'b', 'c'], setAside: [] } });
  assert.deepEqual(plan(s), { type: 'CreatePod', member: 'a', version: '3.5.17', peers: ['a', 'b', 'c'], reason: 'no member answers and its pod is gone; restarting it on its data' });
  assert.equal((plan({ ...s, pods: [pod('a', { ready: false })] }) as { member?: string }).member, 'b');
  // Not a claim that never ran, nor one set aside (a removed member's).
  const some = { ...s, claimMarks: { neverRan: ['c'], started: ['a', 'b'], setAside: ['b'] } };
  assert.deepEqual(plan({ ...some, pods: [pod('a', { ready: false })] }), { type: 'Wait', awaiting: 'MembersAnswering', members: ['a'], reason: 'no member answered; waiting for etcd' });
  // Claims of an earlier version say nothing: which held a member is for a person to say.
  const unmarked = plan({ ...s, claimMarks: { neverRan: [], started: [], setAside: [] } });
  assert.equal((unmarked as { cause?: string }).cause, 'MembershipUnknown');
  assert.match((unmarked as { reason: string }).reason, /kubectl annotate pvc <claim> etcd\.database\.coreos\.com\/member-started=true/);
  // Claims of this version that say their member never ran are told as such, not as an earlier version's (review 8).
  const reason = (plan({ ...s, claimMarks: { neverRan: ['c'], started: [], setAside: [] } }) as { reason: string }).reason;
  assert.match(reason, /claims a, b \(made by an earlier operator version\) do not say.*; claims c say their member never ran on them \(a mark that may be stale\)/);
});

test('pods of an unknown bootstrap are not touched: a person says whether they are members', () => {
  const s = healthy([], { bootstrapped: false, members: undefined, pods: [pod('x')] });
  assert.equal((plan(s) as { cause?: string }).cause, 'UnrecordedBootstrap');
  assert.deepEqual(plan({ ...s, pods: [pod('x', { terminating: true })] }), { type: 'Wait', awaiting: 'PodStopping', members: ['x'], reason: 'pod x of no recorded bootstrap is stopping; not bootstrapping beside it' });
});

test('claims a deleted cluster of the name left behind are adopted, never bootstrapped beside; removed members are not restarted', () => {
  const fresh = { desiredSize: 3, bootstrapped: false, members: undefined };
  const retained = [retainedClaim('x'), retainedClaim('z', { removed: true }), retainedClaim('y')];
  assert.deepEqual(plan(healthy([], { ...fresh, retained })),
    { type: 'Adopt', claims: ['x', 'y', 'z'], members: ['x', 'y'], reason: 're-forming on the claims of a deleted cluster of this name: members x, y' });
  // Only removed members' data: nothing to re-form, and no second cluster under the name either.
  assert.deepEqual(plan(healthy([], { ...fresh, retained: [retainedClaim('z', { removed: true })] })), {
    type: 'Blocked', cause: 'RetainedClaimsRemoved',
    reason: 'claims z of a deleted cluster of this name hold only removed members\' data: delete them (kubectl delete pvc z) and the cluster bootstraps anew',
  });
  // A pod of its own whose bootstrap it cannot see: neither.
  assert.equal(type(plan(healthy([], { ...fresh, retained, pods: [pod('w')] }))), 'Blocked');
  // Once adopted, status records it bootstrapped with the adopted membership: the members restart on their data.
  const adopted = healthy([], { desiredSize: 3, members: undefined, claims: ['x', 'y', 'z'], recordedMembers: ['x', 'y'], pods: [] });
  assert.deepEqual(plan(adopted), { type: 'CreatePod', member: 'x', version: '3.5.17', peers: ['x', 'y'], reason: 'no member answers and its pod is gone; restarting it on its data' });
});

test('of claims a deleted cluster left, those never run on are not adopted, and never deleted: the mark may be stale (issue 32, finding 2a; trial 1)', () => {
  // An EtcdCluster on volumes that never ran, deleted and made again: its claims should hold nothing.
  const fresh = healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, retained: ['p', 'q'].map((n) => retainedClaim(n, { neverRan: true })), unclaimedForMs: { p: 60_000, q: 60_000 } });
  assert.deepEqual(plan(fresh), { type: 'Bootstrap', size: 3, version: '3.5.17' }, 'no reason not to bootstrap');
  // Its member may have run while the operator was stopped, taking writes straight to its pod: it is kept for a person.
  assert.deepEqual(plan({ ...fresh, unclaimedForMs: { p: 60_000, q: 700_000 } }), { type: 'Bootstrap', size: 3, version: '3.5.17' });
  const running = healthy(['a'], { retained: fresh.retained, unclaimedForMs: { p: 700_000 } });
  assert.equal(plan(running).type, 'Steady');
  // Beside a claim that may hold data: only that one is adopted.
  assert.deepEqual((plan({ ...fresh, retained: [...fresh.retained, retainedClaim('r')] }) as { claims?: string[] }).claims, ['r']);
});

test('claims of two earlier incarnations: only the newest is adopted, the other named and left alone (issue 32, finding 2b)', () => {
  const retained = [retainedClaim('p'), retainedClaim('q'), retainedClaim('r', { incarnation: 'u2', createdMs: 2000 }), retainedClaim('s', { incarnation: 'u2', createdMs: 2001 })];
  const s = healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, retained });
  assert.deepEqual(plan(s), {
    type: 'Adopt', claims: ['r', 's'], members: ['r', 's'],
    reason: 're-forming on the claims of a deleted cluster of this name: members r, s; claims p, q of an earlier incarnation are left alone: delete them once their data is not needed (kubectl delete pvc p q)',
  });
  // The newer incarnation never ran: the older one, which ran, is adopted.
  const newerEmpty = retained.map((c) => (c.incarnation === 'u2' ? { ...c, neverRan: true } : c));
  assert.deepEqual((plan({ ...s, retained: newerEmpty }) as { claims?: string[] }).claims, ['p', 'q']);
});

test('scale up adds one member, as a learner where supported', () => {
  assert.deepEqual(plan(healthy(['a', 'b', 'c'], { desiredSize: 5 })), { type: 'AddMember', learner: true, version: '3.5.17', reason: 'scaling up to 5' });
  assert.deepEqual(plan(healthy(['a'], { desiredSize: 3, supportsLearners: false })), { type: 'AddMember', learner: false, version: '3.5.17', reason: 'scaling up to 3' });
});

test('an added learner gets its pod, waits to catch up, then is promoted; never a second learner meanwhile', () => {
  const base = healthy(['a', 'b', 'c'], { desiredSize: 5 });
  const added = { ...base, members: [...(base.members ?? []), member('d', { isLearner: true, started: false })] };
  assert.deepEqual(plan(added), { type: 'CreatePod', member: 'd', version: '3.5.17', reason: 'learner added; starting its pod' });
  const lagging = { ...added, pods: [...added.pods, pod('d')], health: [...added.health, health('d', { raftIndex: 50 })] };
  assert.equal(type(plan(lagging)), 'Wait');
  const caughtUp = { ...lagging, health: [...added.health, health('d', { raftIndex: 95 })] };
  assert.deepEqual(plan(caughtUp), { type: 'PromoteLearner', memberId: 'id-d', member: 'd' });
});

test('a voting member added but never started gets its pod (resume after a crash between add and create)', () => {
  const base = healthy(['a', 'b', 'c'], { desiredSize: 4, supportsLearners: false });
  const s = { ...base, members: [...(base.members ?? []), member('d', { started: false })] };
  assert.equal(plan(s).type, 'CreatePod');
});

test('scale down removes a non-leader, one at a time', () => {
  const action = plan(healthy(['a', 'b', 'c', 'd', 'e'], { desiredSize: 3 }));
  assert.deepEqual(action, { type: 'RemoveMember', memberId: 'id-b', member: 'b', reason: 'scaling down to 3' });
});

test('a pod that is not a member is deleted; its claim stays for the grace period', () => {
  const s = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b'), pod('c'), pod('old')] });
  assert.deepEqual(plan(s), { type: 'DeletePod', member: 'old', deleteClaim: false, reason: 'pod is not a member of the cluster', notMember: true });
});

test('a member whose pod is gone rejoins on its volume, or without one is removed for replacement', () => {
  const withoutPod = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b')], health: [health('a', { isLeader: true }), health('b')] });
  assert.deepEqual(plan({ ...withoutPod, claims: ['a', 'b', 'c'] }), { type: 'CreatePod', member: 'c', version: '3.5.17', reason: 'pod gone; rejoining with its data' });
  assert.deepEqual(plan(withoutPod), { type: 'RemoveMember', memberId: 'id-c', member: 'c', reason: 'pod gone and no volume; replacing the member' });
});

test('a failed member is replaced; with a volume, its pod is recreated on the data instead', () => {
  const failed = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b'), pod('c', { phase: 'Failed', ready: false })] });
  assert.equal(plan(failed).type, 'RemoveMember');
  assert.deepEqual(plan({ ...failed, claims: ['c'] }), { type: 'DeletePod', member: 'c', deleteClaim: false, reason: 'pod failed; restarting it on its data' });
});

test('a member is replaced only once it answered nothing past the threshold; before it, everything else waits', () => {
  const silent = healthy(['a', 'b', 'c'], { desiredSize: 5, pods: [pod('a'), pod('b'), pod('c', { ready: false })], health: [health('a', { isLeader: true }), health('b')], silentForMs: { c: 5_000 } });
  assert.deepEqual(plan(silent), { type: 'Wait', awaiting: 'MemberReady', members: ['c'], reason: 'member c is not ready' }, 'the readiness gate holds the scale-up');
  const long = { ...silent, desiredSize: 3, silentForMs: { c: 120_000 } };
  assert.deepEqual(plan(long), { type: 'RemoveMember', memberId: 'id-c', member: 'c', reason: 'answered nothing for 120 s; replacing it' });
  assert.deepEqual(plan({ ...long, claims: ['c'] }), { type: 'DeletePod', member: 'c', deleteClaim: false, reason: 'answered nothing for 120 s; restarting it on its data' },
    'with a volume it is restarted on its data, never replaced');
});

test('an unready member that answers is never replaced, however long it is unready (finding 1)', () => {
  const slow = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b', { ready: false }), pod('c', { ready: false })] });
  assert.deepEqual(plan(slow), { type: 'Wait', awaiting: 'MemberReady', members: ['b'], reason: 'member b is not ready' });
});

test('a removed member\'s claim is deleted only after the grace period, and never a member\'s', () => {
  const s = healthy(['a', 'b', 'c'], { claims: ['a', 'b', 'c', 'old'], claimMarks: { neverRan: [], started: [], setAside: ['old'] }, unclaimedForMs: { old: 60_000 } });
  assert.equal(plan(s).type, 'Steady', 'within the grace period it stays');
  assert.deepEqual(plan({ ...s, unclaimedForMs: { old: 700_000 } }), { type: 'DeleteClaim', member: 'old', reason: 'claim of no member for 600 s' });
  assert.equal(plan({ ...s, unclaimedForMs: { a: 700_000 } }).type, 'Steady', 'a member\'s claim, whatever the clock says');
});

test('the leader is the one the voters agree on, not one that only says it leads (issue 32, review 9)', () => {
  // c says it leads (a stale term, cut off), a and b follow a: a is the leader, kept last and handed over from.
  const s = healthy(['a', 'b', 'c'], { desiredSize: 2, health: [health('c', { isLeader: true }), health('a', { isLeader: true }), health('b')] });
  assert.equal((plan(s) as { member?: string }).member, 'b');
  // With no leader agreed on, a roll waits for one rather than judging who is caught up against none.
  const rolling = healthy(['a', 'b', 'c'], { targetVersion: '3.5.21', claims: ['a', 'b', 'c'], health: ['a', 'b', 'c'].map((n) => health(n, { leaderId: '' })) });
  assert.equal((plan(rolling) as { awaiting?: string }).awaiting, 'LeaderElection');
});

test('the leader hands leadership to a healthy member before it is removed', () => {
  const s = healthy(['a', 'b', 'c'], { pods: [pod('a', { phase: 'Failed', ready: false }), pod('b'), pod('c')] });
  assert.deepEqual(plan(s), { type: 'MoveLeader', toMemberId: 'id-b', to: 'b', reason: 'before removing a' });
});

test('no removal that would leave the rest without a healthy quorum', () => {
  // d is gone for good; a, b, c answer: removing d leaves three, all healthy.
  const s = healthy(['a', 'b', 'c', 'd'], { pods: [pod('a'), pod('b'), pod('c')], health: [health('a', { isLeader: true }), health('b'), health('c')] });
  assert.equal(plan(s).type, 'RemoveMember');
  // b's pod failed but b answers; c does not answer (restarting). Removing b would leave a and c with only a
  // healthy: no quorum of two. Wait instead.
  const risky = healthy(['a', 'b', 'c'], {
    pods: [pod('a'), pod('b', { phase: 'Failed', ready: false }), pod('c', { ready: false })],
    health: [health('a', { isLeader: true }), health('b')],
  });
  assert.deepEqual(plan(risky), { type: 'Wait', awaiting: 'MembersAnswering', members: ['c'], reason: 'removing b would leave 1 answering voters, fewer than the 2 needed' });
});

test('quorum lost with pods or volumes still there waits; with a majority gone with their data it is reported', () => {
  const names = ['a', 'b', 'c'];
  const down = healthy(names, { health: [health('a')], pods: [pod('a'), pod('b', { ready: false }), pod('c', { ready: false })] });
  assert.equal(plan(down).type, 'Wait');
  const gone = healthy(names, { health: [health('a')], pods: [pod('a')] });
  assert.deepEqual(plan(gone), { type: 'QuorumLost', reason: '2 of 3 members are gone with their data; a majority is lost' });
  assert.equal(plan({ ...gone, claims: ['b', 'c'] }).type, 'CreatePod', 'with volumes the members are brought back instead');
});

test('no member answering means wait, never a destructive action', () => {
  const s = healthy(['a', 'b', 'c'], { members: undefined, health: [] });
  assert.equal(plan(s).type, 'Wait');
});

test('a stopping pod is not gone: its member is not restarted beside it, and a stopping majority is no lost majority (finding 6)', () => {
  const s = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b'), pod('c', { terminating: true })], claims: ['c'], health: [health('a', { isLeader: true }), health('b')] });
  assert.deepEqual(plan(s), { type: 'Wait', awaiting: 'PodStopping', members: ['c'], reason: 'the pod of member c is stopping' }, 'no pod made while its old one may still run');
  assert.deepEqual(plan({ ...s, pods: [pod('a'), pod('b')] }), { type: 'CreatePod', member: 'c', version: '3.5.17', reason: 'pod gone; rejoining with its data' });
  // Evicted but maybe alive: the majority that does not answer may still be serving on its own.
  const evicted = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b', { terminating: true }), pod('c', { terminating: true })], health: [health('a')],
    rebuildFrom: { backup: 'nightly', path: 'ex/snap_v9', revision: 9 } });
  assert.equal(plan(evicted).type, 'Wait', 'no rebuild while the majority\'s pods are stopping');
  assert.equal(plan({ ...evicted, pods: [pod('a')] }).type, 'StartRebuild', 'once they are gone, it is a lost majority');
});

test('a healthy cluster at its size is steady', () => {
  assert.deepEqual(plan(healthy(['a', 'b', 'c'])), { type: 'Steady' });
});

test('over every small state, the planner never removes or deletes while the member list is unknown', () => {
  for (let size = 1; size <= 5; size++) {
    for (let podsPresent = 0; podsPresent <= size; podsPresent++) {
      const names = ['a', 'b', 'c', 'd', 'e'].slice(0, size);
      const s = healthy(names, { members: undefined, health: [], pods: names.slice(0, podsPresent).map((n) => pod(n, { ready: false })) });
      // QuorumLost only reports (no pod and no claim left): it touches nothing.
      assert.ok(['Wait', 'Paused', 'QuorumLost'].includes(plan(s).type), `size ${size}, ${podsPresent} pods`);
    }
  }
});

/** A healthy cluster of a, b, c (a leading) on 3.5.17, asked to run `target`. */
const rolling = (target: string, o: Partial<ClusterState> = {}): ClusterState => healthy(['a', 'b', 'c'], { targetVersion: target, ...o });

test('an upgrade restarts members with volumes on their data, one at a time, followers first', () => {
  assert.deepEqual(plan(rolling('3.5.35', { claims: ['a', 'b', 'c'] })),
    { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'upgrading b to 3.5.35: restarting it on its data' });
  const bDone = rolling('3.5.35', { claims: ['a', 'b', 'c'], pods: [pod('a'), pod('b', { version: '3.5.35' }), pod('c')] });
  assert.equal((plan(bDone) as { member: string }).member, 'c');
  const restarting = { ...bDone, pods: [pod('a'), pod('b', { version: '3.5.35', ready: false }), pod('c')] };
  assert.equal(plan(restarting).type, 'Wait', 'the next step waits for the restarted member to be ready');
});

test('an upgrade waits until every member is caught up with the leader', () => {
  const behind = rolling('3.5.35', { health: [health('a', { isLeader: true, raftIndex: 500 }), health('b', { raftIndex: 500 }), health('c', { raftIndex: 100 })] });
  assert.deepEqual(plan(behind), { type: 'Wait', awaiting: 'CatchingUp', members: ['c'], reason: 'c is catching up before the next upgrade step' });
});

test('the leader is upgraded last, after leadership moves to an upgraded member', () => {
  const onlyLeaderLeft = rolling('3.5.35', { claims: ['a', 'b', 'c'], pods: [pod('a'), pod('b', { version: '3.5.35' }), pod('c', { version: '3.5.35' })] });
  assert.deepEqual(plan(onlyLeaderLeft), { type: 'MoveLeader', toMemberId: 'id-b', to: 'b', reason: 'before upgrading a to 3.5.35' });
  const moved = { ...onlyLeaderLeft, health: [health('a', { leaderId: 'id-b' }), health('b', { isLeader: true }), health('c', { leaderId: 'id-b' })] };
  assert.deepEqual(plan(moved), { type: 'DeletePod', member: 'a', deleteClaim: false, reason: 'upgrading a to 3.5.35: restarting it on its data' });
});

test('without volumes a member is replaced: a new member on the target version first, then the old one removed', () => {
  assert.deepEqual(plan(rolling('3.6.5', { pods: ['a', 'b', 'c'].map((n) => pod(n, { version: '3.5.35' })) })),
    { type: 'AddMember', learner: true, version: '3.6.5', reason: 'upgrading b to 3.6.5: adding its replacement first' });
  const surged = healthy(['a', 'b', 'c', 'd'], { desiredSize: 3, targetVersion: '3.6.5', pods: [pod('a', { version: '3.5.35' }), pod('b', { version: '3.5.35' }), pod('c', { version: '3.5.35' }), pod('d', { version: '3.6.5' })] });
  assert.deepEqual(plan(surged), { type: 'RemoveMember', memberId: 'id-b', member: 'b', reason: 'scaling down to 3' });
  const leaderLeft = healthy(['a', 'c', 'd', 'e'], { desiredSize: 3, targetVersion: '3.6.5', pods: [pod('a', { version: '3.5.35' }), pod('c'), pod('d'), pod('e')].map((p) => (p.name === 'a' ? p : { ...p, version: '3.6.5' })) });
  assert.deepEqual(plan(leaderLeft), { type: 'MoveLeader', toMemberId: 'id-c', to: 'c', reason: 'before removing a' }, 'the old leader is removed last, after handing over');
});

test('a version etcd cannot move to is refused, and repairs keep the version that runs', () => {
  const skipped = rolling('3.6.5');
  assert.deepEqual(plan(skipped), { type: 'UpgradeRefused', reason: 'etcd requires every member at 3.5.32 or later before upgrading to 3.6; set version 3.5.32 (or a later 3.5 patch) first' });
  assert.deepEqual(plan({ ...skipped, desiredSize: 4 }), { type: 'AddMember', learner: true, version: '3.5.17', reason: 'scaling up to 4' });
  const twoDown = rolling('3.4.30', { pods: ['a', 'b', 'c'].map((n) => pod(n, { version: '3.6.5' })) });
  assert.equal(plan(twoDown).type, 'UpgradeRefused');
  const patchDown = rolling('3.5.17', { pods: ['a', 'b', 'c'].map((n) => pod(n, { version: '3.5.35' })) });
  assert.equal(plan(patchDown).type, 'AddMember', 'a patch downgrade within a minor version rolls');
});

test('a minor downgrade: etcd lowers the cluster and storage versions first (nothing restarts meanwhile, repairs keep the newer release), then members roll one at a time', () => {
  const on36 = (o: Partial<ClusterState> = {}): ClusterState => rolling('3.5.35', {
    claims: ['a', 'b', 'c'], pods: ['a', 'b', 'c'].map((n) => pod(n, { version: '3.6.5' })),
    health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a', storageVersion: '3.6.0' })), ...o,
  });
  assert.deepEqual(plan(on36()), { type: 'EnableDowngrade', to: '3.5', reason: 'downgrading to 3.5.35: etcd lowers the cluster version and each member\'s storage version to 3.5 first' });
  // Right after an upgrade the data still reads 3.5 while the leader is about to raise the cluster version: no warrant.
  const justUpgraded = on36({ health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a', storageVersion: '3.5.0' })) });
  assert.equal(plan(justUpgraded).type, 'EnableDowngrade');
  const enabled = (storage: Record<string, string>): ClusterState => on36({
    health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a', storageVersion: storage[n] ?? '3.6.0', downgradeTarget: '3.5.0' })),
  });
  assert.deepEqual(plan(enabled({ a: '3.5.0' })), { type: 'Wait', awaiting: 'StorageDowngrade', members: ['b', 'c'], reason: 'waiting for the storage version of b, c to go down to 3.5 before any member runs 3.5.35' });
  const podGone = { ...enabled({ a: '3.5.0' }), pods: [pod('a', { version: '3.6.5' }), pod('c', { version: '3.6.5' })] };
  assert.deepEqual(plan(podGone), { type: 'CreatePod', member: 'b', version: '3.6.5', reason: 'pod gone; rejoining with its data' }, 'data not yet downgraded restarts on the release that wrote it');
  const ready = enabled({ a: '3.5.0', b: '3.5.0', c: '3.5.0' });
  assert.deepEqual(plan(ready), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'downgrading b to 3.5.35: restarting it on its data' });
  // The member the roll stopped does not answer until its new pod runs: it gets the older release (made on the newer one, the roll would never end).
  const stopped = { ...ready, pods: [pod('a', { version: '3.6.5' }), pod('c', { version: '3.6.5' })], health: ready.health.filter((h) => h.name !== 'b') };
  assert.deepEqual(plan(stopped), { type: 'CreatePod', member: 'b', version: '3.5.35', reason: 'pod gone; rejoining with its data' });
  // Once one member runs 3.5 the data stays 3.5: a member that stops answering does not hold the roll back.
  const oneDown = on36({ pods: [pod('a', { version: '3.6.5' }), pod('b', { version: '3.5.35' }), pod('c', { version: '3.6.5' })] });
  assert.equal((plan(oneDown) as { member?: string }).member, 'c');
  // The spec back up to 3.6 before the downgrade went through: it is cancelled.
  assert.deepEqual(plan({ ...enabled({}), targetVersion: '3.6.5' }), { type: 'CancelDowngrade', reason: 'the spec asks for 3.6.5 again: cancelling the downgrade to 3.5.0' });
});

test('members whose user changes (root members of earlier versions onto "restricted" pods) are replaced, not restarted on data the new user may not read; one whose data its user cannot use is replaced', () => {
  const rooted = rolling('3.5.17', { claims: ['a', 'b', 'c'], targetTemplate: 'restricted', targetRunAsUser: 65532, pods: ['a', 'b', 'c'].map((n) => pod(n, { runAsUser: 0 })) });
  assert.deepEqual(plan(rooted), { type: 'AddMember', learner: true, version: '3.5.17',
    reason: 'applying the changed spec.pod to b: adding its replacement first (its data was written as another user, which not every volume lets the new one read: a new member on a new volume takes its place)' });
  const sameUser = { ...rooted, pods: ['a', 'b', 'c'].map((n) => pod(n, { runAsUser: 65532 })) };
  assert.deepEqual(plan(sameUser), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'applying the changed spec.pod to b: restarting it on its data' });
  const unusable = healthy(['a', 'b', 'c'], { claims: ['a', 'b', 'c'], silentForMs: { b: 120_000 }, health: ['a', 'c'].map((n) => health(n, { isLeader: n === 'a' })),
    pods: [pod('a'), pod('b', { ready: false, dataNotOurs: true }), pod('c')] });
  assert.deepEqual(plan(unusable), { type: 'RemoveMember', memberId: 'id-b', member: 'b', reason: 'answered nothing for 120 s: its user cannot use its data on this volume; replacing it with a member on a new volume' });
});

test('a new cluster starts on the target version', () => {
  assert.deepEqual(plan(healthy([], { desiredSize: 1, bootstrapped: false, members: undefined, targetVersion: '3.6.5' })), { type: 'Bootstrap', size: 1, version: '3.6.5' });
});

test('under CORRUPT, the member whose HashKV differs from a majority\'s is removed, whatever the alarm names; all agreeing, the alarm is disarmed (finding 4)', () => {
  const check = (hashes: Record<string, number>) => ({ corruptionCheck: { revision: 40, hashes } });
  const corrupt = healthy(['a', 'b', 'c'], { alarms: [{ memberId: 'id-b', alarm: 'CORRUPT' }, { memberId: 'id-a', alarm: 'NOSPACE' }], claims: ['a', 'b', 'c'], ...check({ a: 1, b: 2, c: 1 }) });
  assert.deepEqual(plan(corrupt), { type: 'RemoveMember', memberId: 'id-b', member: 'b', reason: 'CORRUPT: its data differs from that of a majority at revision 40 (HashKV); replacing it' });
  // etcd's check runs on the leader: a corrupt leader gets its healthy followers named.
  const leaderCorrupt = { ...corrupt, alarms: [{ memberId: 'id-b', alarm: 'CORRUPT' as const }, { memberId: 'id-c', alarm: 'CORRUPT' as const }], ...check({ a: 7, b: 1, c: 1 }) };
  assert.deepEqual(plan(leaderCorrupt), { type: 'MoveLeader', toMemberId: 'id-b', to: 'b', reason: 'before removing a' }, 'the leader goes, the followers it named stay');
  const removed = healthy(['a', 'c'], { desiredSize: 3, alarms: [{ memberId: 'id-b', alarm: 'CORRUPT' }], ...check({ a: 1, c: 1 }) });
  assert.deepEqual(plan(removed), { type: 'DisarmAlarms', alarms: [{ memberId: 'id-b', alarm: 'CORRUPT' }], reason: 'every member\'s data agrees at revision 40' });
  assert.deepEqual(plan({ ...removed, ...check({ a: 1 }) }), { type: 'CorruptionUndecided', reason: 'etcd raised CORRUPT and only 1 of 2 members answered HashKV; compare their data (etcdctl endpoint hashkv) and remove the wrong ones' });
});

test('NOSPACE: compact at the leader’s revision, defragment followers then the leader, then disarm; no step repeats', () => {
  const alarms = [{ memberId: 'id-a', alarm: 'NOSPACE' as const }];
  const s = healthy(['a', 'b', 'c'], { alarms, health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a', revision: 777 })) });
  assert.deepEqual(plan(s), { type: 'Compact', revision: 777, reason: 'NOSPACE: compacting the key history' });
  const steps = [{ compactedRevision: 777 }, { compactedRevision: 777, defragmented: ['b'] }, { compactedRevision: 777, defragmented: ['b', 'c'] }]
    .map((noSpaceRecovery) => plan({ ...s, noSpaceRecovery }));
  assert.deepEqual(steps.map((a) => (a as { member?: string }).member), ['b', 'c', 'a'], 'followers first, the leader last');
  assert.deepEqual(plan({ ...s, noSpaceRecovery: { compactedRevision: 777, defragmented: ['b', 'c', 'a'] } }),
    { type: 'DisarmAlarms', alarms, reason: 'NOSPACE: space recovered' });
});

test('NOSPACE recovered: alarms naming a member are disarmed; one naming no member (disarming member 0 disarms every alarm) is left to a person', () => {
  const alarms = [{ memberId: 'id-b', alarm: 'NOSPACE' as const }, { memberId: '0', alarm: 'NOSPACE' as const }];
  const s = healthy(['a', 'b', 'c'], { alarms, noSpaceRecovery: { compactedRevision: 50, defragmented: ['a', 'b', 'c'] } });
  assert.deepEqual(plan(s), { type: 'DisarmAlarms', alarms: [{ memberId: 'id-b', alarm: 'NOSPACE' }], reason: 'NOSPACE: space recovered' });
  const left = plan({ ...s, alarms: [{ memberId: '0', alarm: 'NOSPACE' }] });
  assert.equal(left.type === 'Blocked' ? left.cause : left.type, 'AlarmNamesNoMember');
});

test('NOSPACE raised again within a minute of the last recovery waits for the minute to pass (a client writing what does not fit would have every member defragmented every second); a recovery under way goes on', () => {
  const alarms = [{ memberId: 'id-a', alarm: 'NOSPACE' as const }];
  const s = healthy(['a', 'b', 'c'], { alarms, health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a', revision: 777 })), noSpaceDisarmedForMs: 10_000 });
  assert.deepEqual(plan(s), { type: 'Wait', awaiting: 'NoSpaceInterval', members: [],
    reason: 'NOSPACE raised again 10 s after the last recovery (a client writes more than the room it left): the next starts in 50 s' });
  assert.equal(plan({ ...s, noSpaceDisarmedForMs: 60_000 }).type, 'Compact');
  assert.equal(plan({ ...s, noSpaceRecovery: { compactedRevision: 777, defragmented: [] } }).type, 'Defragment', 'begun before the last disarm was recorded: finished');
});

test('NOSPACE with data that still fills the quota is left raised, Blocked for a person, until keys are deleted; then the recovery starts again from a compaction', () => {
  const at = (revision: number): MemberHealth[] => ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a', revision }));
  const s = healthy(['a', 'b', 'c'], { alarms: [{ memberId: 'id-a', alarm: 'NOSPACE' }], quotaBackendBytes: 1000, health: at(40), noSpaceRecovery: { compactedRevision: 40, defragmented: ['a', 'b', 'c'] } });
  assert.deepEqual(plan(s), { type: 'Blocked', cause: 'QuotaFull',
    reason: 'etcd refuses writes (NOSPACE): member a\'s database is 1000 bytes of the 1000-byte quota after compacting and defragmenting; '
      + 'delete keys (etcd takes deletes past its quota; the operator then compacts and defragments again), or raise spec.quotaBackendBytes' }, 'nothing to recover by compaction: a person must act');
  assert.equal(plan({ ...s, quotaBackendBytes: 4000 }).type, 'DisarmAlarms', 'the quota raised (the members rolled onto it): space enough');
  assert.deepEqual(plan({ ...s, health: at(41) }), { type: 'Compact', revision: 41, reason: 'NOSPACE: compacting the keys deleted since' });
});

test('defragmentation, when configured, takes the most wasteful members one at a time, followers before the leader', () => {
  const wasteful = (n: string, isLeader = false): MemberHealth => health(n, { isLeader, dbSize: 1000, dbSizeInUse: 200 });
  const s = healthy(['a', 'b', 'c'], { health: [wasteful('a', true), health('b'), wasteful('c')] });
  assert.equal(plan(s).type, 'Steady', 'off unless configured');
  assert.deepEqual(plan({ ...s, defragmentation: { unusedPercent: 50 } }), { type: 'Defragment', member: 'c', reason: 'more than 50% of its database is unused' });
  assert.equal(plan({ ...s, defragmentation: { unusedPercent: 90 } }).type, 'Steady', 'below the threshold');
  assert.equal(plan({ ...s, defragmentation: { unusedPercent: 50, minDbSizeBytes: 5000 } }).type, 'Steady', 'small databases are left alone');
  const onlyLeader = { ...s, health: [wasteful('a', true), health('b'), health('c')], defragmentation: { unusedPercent: 50 } };
  assert.equal((plan(onlyLeader) as { member?: string }).member, 'a');
});

test('changed settings roll the members like an upgrade', () => {
  const s = rolling('3.5.17', { targetConfig: 'new', claims: ['a', 'b', 'c'] });
  assert.deepEqual(plan(s), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'applying new settings to b: restarting it on its data' });
  assert.equal(plan({ ...s, pods: ['a', 'b', 'c'].map((n) => pod(n, { config: 'new' })) }).type, 'Steady');
});

test('without volumes, changed settings replace a member: the one on old settings is removed, never its successor', () => {
  // The successor's name sorts first, as random names often do: it must stay all the same.
  const names = ['a', 'b', 'c', 'z'];
  const surged = healthy(names, { desiredSize: 3, targetConfig: 'new', pods: names.map((n) => pod(n, { config: n === 'z' ? 'old' : 'new' })),
    health: names.map((n) => health(n, { isLeader: n === 'b' })) });
  assert.deepEqual(plan(surged), { type: 'RemoveMember', memberId: 'id-z', member: 'z', reason: 'scaling down to 3' });
});

test('a changed pod template (resources, say) rolls members with volumes one at a time, each restarted on its data once the cluster is healthy (issue 33)', () => {
  const s = healthy(['a', 'b', 'c'], { targetTemplate: 'new', claims: ['a', 'b', 'c'], pods: ['a', 'b', 'c'].map((n) => pod(n, { template: 'old' })) });
  assert.deepEqual(plan(s), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'applying the changed spec.pod to b: restarting it on its data' });
  const restarting = { ...s, pods: [pod('a', { template: 'old' }), pod('b', { template: 'new', ready: false }), pod('c', { template: 'old' })] };
  assert.equal(plan(restarting).type, 'Wait', 'one member at a time: the next waits for the restarted one to be ready');
  const bDone = { ...s, pods: [pod('a', { template: 'old' }), pod('b', { template: 'new' }), pod('c', { template: 'old' })] };
  assert.deepEqual(plan(bDone), { type: 'DeletePod', member: 'c', deleteClaim: false, reason: 'applying the changed spec.pod to c: restarting it on its data' });
  const leaderLeft = { ...s, pods: [pod('a', { template: 'old' }), pod('b', { template: 'new' }), pod('c', { template: 'new' })] };
  assert.deepEqual(plan(leaderLeft), { type: 'MoveLeader', toMemberId: 'id-b', to: 'b', reason: 'before applying the changed spec.pod to a' }, 'the leader last');
  assert.equal(plan({ ...s, pods: ['a', 'b', 'c'].map((n) => pod(n, { template: 'new' })) }).type, 'Steady');
  // Settings and template both changed: one restart applies both, told as the settings' roll.
  const both = { ...s, targetConfig: 'x' };
  assert.deepEqual(plan(both), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'applying new settings to b: restarting it on its data' });
});

test('without volumes, a changed pod template replaces members one at a time: the successor added first, then the old member removed (issue 33)', () => {
  const s = healthy(['a', 'b', 'c'], { targetTemplate: 'new', pods: ['a', 'b', 'c'].map((n) => pod(n, { template: 'old' })) });
  assert.deepEqual(plan(s), { type: 'AddMember', learner: true, version: '3.5.17', reason: 'applying the changed spec.pod to b: adding its replacement first' });
  const surged = healthy(['a', 'b', 'c', 'd'], { desiredSize: 3, targetTemplate: 'new', pods: [...['a', 'b', 'c'].map((n) => pod(n, { template: 'old' })), pod('d', { template: 'new' })] });
  assert.deepEqual(plan(surged), { type: 'RemoveMember', memberId: 'id-b', member: 'b', reason: 'scaling down to 3' }, 'an old member goes, never its successor');
});

test('a change of spec.pod labels or annotations only is patched onto each member\'s pod, one per pass, restarting none (issue 33)', () => {
  const s = healthy(['a', 'b', 'c'], { targetMetadata: 'new', claims: ['a', 'b', 'c'], pods: ['a', 'b', 'c'].map((n) => pod(n, { metadata: 'old' })) });
  assert.deepEqual(plan(s), { type: 'PatchPodMetadata', member: 'a', reason: 'applying the spec.pod labels and annotations: no restart' });
  const aDone = { ...s, pods: [pod('a', { metadata: 'new' }), pod('b', { metadata: 'old' }), pod('c', { metadata: 'old' })] };
  assert.deepEqual(plan(aDone), { type: 'PatchPodMetadata', member: 'b', reason: 'applying the spec.pod labels and annotations: no restart' });
  assert.equal(plan({ ...s, pods: ['a', 'b', 'c'].map((n) => pod(n, { metadata: 'new' })) }).type, 'Steady');
  // Labels and a restart-needing field together: the patches come first (they restart nothing), then the roll.
  const both = { ...s, targetTemplate: 'new', pods: ['a', 'b', 'c'].map((n) => pod(n, { metadata: 'old', template: 'old' })) };
  assert.equal(plan(both).type, 'PatchPodMetadata');
  assert.equal(plan({ ...both, pods: ['a', 'b', 'c'].map((n) => pod(n, { template: 'old', metadata: 'new' })) }).type, 'DeletePod');
});

test('a pod of an earlier operator version, which records no pod template, does not roll when judged on the spec\'s: it gets the record by a patch (issue 33)', () => {
  const earlier = (n: string, template: string): PodView => pod(n, { template, templateUnrecorded: true });
  const s = healthy(['a', 'b', 'c'], { targetTemplate: 't', claims: ['a', 'b', 'c'], pods: ['a', 'b', 'c'].map((n) => earlier(n, 't')) });
  assert.deepEqual(plan(s), { type: 'PatchPodMetadata', member: 'a', recordTemplate: 't', reason: 'recording the pod template it is on (made by an earlier operator version): no restart' });
  const recorded = { ...s, pods: ['a', 'b', 'c'].map((n) => pod(n, { template: 't' })) };
  assert.equal(plan(recorded).type, 'Steady');
  // One judged on another template (a change the earlier operator never applied) rolls, and gets no record of the spec's.
  const changed = { ...s, pods: [earlier('a', 't'), earlier('b', ''), pod('c', { template: 't' })] };
  assert.deepEqual(plan({ ...changed, pods: [pod('a', { template: 't' }), earlier('b', ''), pod('c', { template: 't' })] }),
    { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'applying the changed spec.pod to b: restarting it on its data' });
  assert.equal((plan(changed) as { member?: string }).member, 'a', 'the record first, then the roll');
  // Both at once on one pod: its labels and its record in one patch.
  assert.deepEqual(plan({ ...s, targetMetadata: 'm' }), { type: 'PatchPodMetadata', member: 'a', recordTemplate: 't',
    reason: 'applying the spec.pod labels and annotations; recording the pod template it is on (made by an earlier operator version): no restart' });
});

test('a majority lost for good: reported and left alone without a restore policy, rebuilt from the newest backup with one', () => {
  const lost = healthy(['a', 'b', 'c'], { pods: [pod('a')], health: [health('a')] });
  assert.equal(plan(lost).type, 'QuorumLost');
  const from = { backup: 'nightly', path: 'ex/snap_v9', revision: 9 };
  assert.deepEqual(plan({ ...lost, rebuildFrom: from }), { type: 'StartRebuild', from, reason: '2 of 3 members are gone with their data; a majority is lost' });
  const allGone = healthy(['a', 'b', 'c'], { pods: [], members: undefined, health: [] });
  assert.equal(plan(allGone).type, 'QuorumLost', 'no member at all, no claim: lost too');
  assert.equal(plan({ ...allGone, claims: ['a'] }).type, 'CreatePod', 'a claim brings its member back');
});

test('a rebuild first removes the lost cluster\'s pods and sets its claims aside for the grace period, then bootstraps afresh beside them (issue 32, finding 4)', () => {
  const rebuilding = healthy(['a'], { bootstrapped: false, rebuild: { cleared: false }, claims: ['a', 'z'] });
  assert.deepEqual(plan(rebuilding), { type: 'DeletePod', member: 'a', deleteClaim: false, reason: 'rebuilding from backup: removing what is left of the lost cluster' });
  // The surviving minority's claims may hold writes newer than the backup: kept like any removed member's.
  assert.deepEqual(plan({ ...rebuilding, pods: [] }), {
    type: 'SetClaimAside', member: 'a', reason: 'rebuilding from backup: the lost cluster\'s claim is kept for the grace period (it may hold writes newer than the backup), never restarted',
  });
  const setAside = { ...rebuilding, pods: [], claimMarks: { neverRan: [], started: [], setAside: ['a', 'z'] } };
  assert.deepEqual(plan(setAside), { type: 'ClearedForRebuild' });
  assert.equal(plan({ ...setAside, members: undefined, rebuild: { cleared: true } }).type, 'Bootstrap');
  // Once the rebuilt cluster runs, they are claims of no member, deleted after the grace period.
  const rebuilt = healthy(['m'], { claims: ['a', 'z', 'm'], claimMarks: { neverRan: [], started: [], setAside: ['a', 'z'] }, unclaimedForMs: { a: 700_000, z: 10_000 } });
  assert.deepEqual(plan(rebuilt), { type: 'DeleteClaim', member: 'a', reason: 'claim of no member for 600 s' });
});

test('recovery from a survivor: the furthest one, alone with --force-new-cluster, then restarted without, then the normal rules', () => {
  // On a version whose --force-new-cluster keeps what the database holds (3.5.22+): the running 3.5.17 moves to it.
  const lost = healthy(['a', 'b', 'c'], { claims: ['a'], pods: [pod('a')], health: [health('a', { raftIndex: 70, revision: 33 })], survivorPolicy: 'auto', targetVersion: '3.5.35' });
  assert.deepEqual(plan(lost), { type: 'StartSurvivorRecovery', survivor: 'a', revision: 33, reason: '2 of 3 members are gone with their data; a majority is lost' });
  // On 3.5.17 it can drop writes the survivor's database holds (etcd issue 20009): never forced; the spec says what to set.
  const old = plan({ ...lost, targetVersion: '3.5.17' });
  assert.equal(old.type, 'QuorumLost');
  assert.match((old as { reason: string }).reason, /needs etcd 3\.5\.22 or 3\.6\.1 or later: in 3\.5\.17, --force-new-cluster can drop writes .*set spec\.version/);
  assert.match((plan({ ...lost, survivorPolicy: 'b' }) as { reason: string }).reason, /survivor b is not available/, 'a named survivor that is gone: nothing forced');
  assert.equal(plan({ ...lost, survivorPolicy: 'auto', claims: [] }).type, 'QuorumLost', 'a survivor without its volume is not used');

  const rec = { survivor: 'a', forced: false };
  const stopped = { ...lost, survivorRecovery: rec, pods: [pod('a', { terminating: true })] };
  assert.equal(plan(stopped).type, 'Wait', 'the old pod stops first');
  assert.deepEqual(plan({ ...stopped, pods: [], members: undefined }),
    { type: 'CreatePod', member: 'a', version: '3.5.35', forceNewCluster: true, reason: 'survivor starting alone with --force-new-cluster' });
  const alone = { ...stopped, pods: [pod('a', { forced: true })], members: [member('a')], health: [health('a', { isLeader: true })] };
  assert.deepEqual(plan(alone), { type: 'RestartSurvivor', survivor: 'a' });
  assert.equal((plan({ ...alone, survivorRecovery: { survivor: 'a', forced: true }, pods: [], members: undefined }) as { forceNewCluster?: true }).forceNewCluster, undefined,
    'restarted without the flag');
  assert.deepEqual(plan({ ...alone, survivorRecovery: { survivor: 'a', forced: true }, pods: [pod('a')] }), { type: 'CompleteSurvivorRecovery', survivor: 'a' });
  assert.equal(plan({ ...alone, survivorRecovery: undefined, pods: [pod('a')] }).type, 'AddMember', 'then it scales back out');
});

test('a recovery from a survivor sets aside the claims of the members --force-new-cluster dropped, before anything else (issue 32, review 1)', () => {
  const marks = { neverRan: [], started: ['a', 'b', 'c'], setAside: [] };
  const alone = healthy(['a', 'b', 'c'], { claims: ['a', 'b', 'c'], claimMarks: marks, survivorRecovery: { survivor: 'a', forced: false }, targetVersion: '3.5.35',
    pods: [pod('a', { forced: true })], members: [member('a')], health: [health('a', { isLeader: true })] });
  assert.deepEqual(plan(alone), { type: 'SetClaimAside', member: 'b', reason: 'etcd no longer lists its member: the claim is kept for the grace period, never restarted' });
  assert.equal((plan({ ...alone, claimMarks: { ...marks, setAside: ['b'] } }) as { member?: string }).member, 'c');
  assert.deepEqual(plan({ ...alone, claimMarks: { ...marks, setAside: ['b', 'c'] } }), { type: 'RestartSurvivor', survivor: 'a' });
  // Any claim whose member etcd no longer lists (an operator stopped between the removal and the mark) likewise.
  const removed = healthy(['a', 'b'], { desiredSize: 2, claims: ['a', 'b', 'c'], claimMarks: marks });
  assert.deepEqual(plan(removed), { type: 'SetClaimAside', member: 'c', reason: 'etcd no longer lists its member: the claim is kept for the grace period, never restarted' });
});

test('a recovery from a survivor whose pod cannot run says so, naming the pod; a failed one restarts on its data (issue 32, review 5)', () => {
  const recovering = healthy(['a', 'b', 'c'], { claims: ['a'], survivorRecovery: { survivor: 'a', forced: false }, targetVersion: '3.5.35', members: undefined, health: [] });
  for (const trouble of [{ dataLost: true }, { nodeLost: true as const, node: 'n1' }, { nodeLost: true as const, terminating: true }]) {
    const blocked = plan({ ...recovering, pods: [pod('a', { forced: true, ready: false, ...trouble })] });
    assert.equal((blocked as { cause?: string }).cause, 'SurvivorLost', JSON.stringify(blocked));
    assert.match((blocked as { reason: string }).reason, /survivor a, whose pod a cannot run/);
  }
  assert.deepEqual(plan({ ...recovering, pods: [pod('a', { forced: true, ready: false, phase: 'Failed' })] }),
    { type: 'DeletePod', member: 'a', deleteClaim: false, reason: 'survivor a: its pod failed; restarting it on its data' });
});

test('a CORRUPT alarm is acted on only for a clear minority: no quorum agreeing, or none naming a member, is for a person (finding 4)', () => {
  const s = healthy(['a', 'b', 'c'], { alarms: [{ memberId: '0', alarm: 'CORRUPT' }] });
  assert.equal(plan(s).type, 'CorruptionUndecided', 'no HashKV taken: nothing known');
  assert.equal(plan({ ...s, corruptionCheck: { revision: 9, hashes: { a: 1, b: 2, c: 3 } } }).type, 'CorruptionUndecided', 'three different answers');
  assert.equal(plan({ ...s, corruptionCheck: { revision: 9, hashes: { a: 1, b: 1, c: 3 } } }).type, 'RemoveMember', 'etcd could not tell, HashKV can');
  assert.equal(plan({ ...s, corruptionCheck: { revision: 9, hashes: { a: 1, b: 1, c: 1 } } }).type, 'CorruptionUndecided', 'all agree, but an alarm naming no member is never disarmed');
  assert.equal(plan({ ...s, alarms: [{ memberId: 'id-gone', alarm: 'CORRUPT' }], corruptionCheck: { revision: 9, hashes: { a: 1, b: 1, c: 1 } } }).type, 'DisarmAlarms', 'the alarm of a member already removed is disarmed');
});

test('an added member that has not started holds every other change; one that never starts is removed (finding 7)', () => {
  const s = healthy(['a', 'b', 'c', 'd'], { desiredSize: 5, members: ['a', 'b', 'c'].map((n) => member(n)).concat(member('d', { started: false })), health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a' })) });
  assert.deepEqual(plan(s), { type: 'Wait', awaiting: 'MembersStarting', members: ['d'], reason: 'member d starting' });
  assert.deepEqual(plan({ ...s, silentForMs: { d: 120_000 } }), { type: 'RemoveMember', memberId: 'id-d', member: 'd', reason: 'member added but never started; removing it' });
});

test('claims without pods or a recorded bootstrap stop a bootstrap (finding 2)', () => {
  assert.equal(plan(healthy([], { desiredSize: 3, bootstrapped: false, members: undefined, claims: ['x'] })).type, 'Blocked');
});

test('a member whose volume came back empty is removed, never restarted on it; a change in flight finishes first (finding 3)', () => {
  const emptied = healthy(['a', 'b', 'c'], { claims: ['a', 'b', 'c'], pods: ['a', 'b', 'c'].map((n) => pod(n, { dataLost: n === 'c', ready: n !== 'c' })),
    health: ['a', 'b'].map((n) => health(n, { isLeader: n === 'a' })), silentForMs: { c: 120_000 } });
  assert.deepEqual(plan(emptied), { type: 'RemoveMember', memberId: 'id-c', member: 'c', reason: 'its volume came back empty: it must not rejoin under its old ID; replacing it' });
  assert.equal(plan({ ...emptied, pods: emptied.pods.map((p) => ({ ...p, dataLost: false })) }).type, 'DeletePod', 'without the guard\'s word it would be restarted on its volume');
  const leading = { ...emptied, pods: emptied.pods.map((p) => ({ ...p, dataLost: p.name === 'a', ready: p.name !== 'a' })), health: ['b', 'c'].map((n) => health(n, { isLeader: n === 'c' })), silentForMs: {} };
  assert.deepEqual(plan(leading).type, 'RemoveMember', 'not the leader: a follower whose data is gone');
  const learning = { ...emptied, desiredSize: 4, members: [...(emptied.members ?? []), member('d', { isLearner: true })], pods: [...emptied.pods, pod('d', { ready: false })] };
  assert.equal(plan(learning).type, 'Wait', 'the learner in flight is finished first');
  const lostLearner = { ...learning, pods: learning.pods.map((p) => ({ ...p, dataLost: p.name === 'd' })), health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a' })) };
  assert.deepEqual(plan(lostLearner), { type: 'RemoveMember', memberId: 'id-d', member: 'd', reason: 'its volume came back empty: it must not rejoin under its old ID; replacing it' });
  // Its pod failed too, and its removal waits for d: it is not restarted on its claim meanwhile (the kind of state seed -1465421452 found).
  const names = ['a', 'b', 'c', 'd', 'e'];
  const failedEmpty = healthy(names, { desiredSize: 6, claims: names, silentForMs: { d: 10_000 }, health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a' })),
    pods: [pod('a'), pod('b'), pod('c'), pod('d', { ready: false }), pod('e', { phase: 'Failed', ready: false, dataLost: true })] });
  assert.deepEqual(plan(failedEmpty), { type: 'Wait', awaiting: 'MembersAnswering', members: ['d'], reason: 'removing e would leave 3 answering voters, fewer than the 4 needed' });
});

test('a learner that never answers is removed after the threshold; one that answers is left to catch up (finding 7)', () => {
  const s = healthy(['a', 'b', 'c', 'd'], { desiredSize: 4, members: ['a', 'b', 'c'].map((n) => member(n)).concat(member('d', { isLearner: true })),
    health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a' })) });
  assert.deepEqual(plan(s), { type: 'Wait', awaiting: 'CatchingUp', members: ['d'], reason: 'learner d catching up' });
  assert.deepEqual(plan({ ...s, silentForMs: { d: 120_000 } }), { type: 'RemoveMember', memberId: 'id-d', member: 'd', reason: 'learner never answered; removing it' });
  const answering = { ...s, health: [...s.health, health('d', { raftIndex: 1 })] };
  assert.deepEqual(plan(answering), { type: 'Wait', awaiting: 'CatchingUp', members: ['d'], reason: 'learner d catching up' }, 'far behind but answering');
});

test('"auto" chooses a survivor only once every member on a volume has answered, or stayed silent past the threshold (finding 8)', () => {
  const lost = healthy(['a', 'b', 'c', 'd', 'e'], { claims: ['a', 'b'], pods: [pod('a'), pod('b', { ready: false })], health: [health('a', { raftIndex: 70, revision: 33 })], survivorPolicy: 'auto', targetVersion: '3.5.35' });
  assert.deepEqual(plan(lost), { type: 'Wait', awaiting: 'MembersAnswering', members: ['b'], reason: '3 of 5 members are gone with their data; a majority is lost; before choosing a survivor, waiting for b (on a volume) to answer' });
  assert.equal((plan({ ...lost, health: [...lost.health, health('b', { raftIndex: 90, revision: 40 })] }) as { survivor?: string }).survivor, 'b', 'b answers: the furthest is b');
  assert.equal((plan({ ...lost, silentForMs: { b: 120_000 } }) as { survivor?: string }).survivor, 'a', 'b silent past the threshold: the choice is made without it');
  assert.equal(plan({ ...lost, survivorPolicy: 'a' }).type, 'StartSurvivorRecovery', 'a named survivor needs no waiting');
  // A pod stopping is not timed as silent: it is waited for as a pod stopping, and named if it never stops.
  const stopping = { ...lost, pods: [pod('a'), pod('b', { ready: false, terminating: true })] };
  assert.equal(plan({ ...stopping, stoppingForMs: { b: 60_000 } }).type, 'Wait');
  assert.equal((plan({ ...stopping, stoppingForMs: { b: 301_000 } }) as { cause?: string }).cause, 'PodStuckStopping');
  // A finalizer holds it whatever its containers do: named, with how to remove it (issue 32, trial 5).
  const held = { ...stopping, pods: stopping.pods.map((p) => (p.name === 'b' ? { ...p, finalizers: ['example.com/hold'] } : p)), stoppingForMs: { b: 301_000 } };
  assert.match((plan(held) as { reason?: string }).reason ?? '', /pod b carries finalizers example\.com\/hold: .*kubectl patch pod b --type=json -p '\[\{"op":"remove","path":"\/metadata\/finalizers"\}\]'/);
});

test('a backup too old for the restore policy is not rebuilt from: the loss is reported with the reason (finding 6)', () => {
  const lost = healthy(['a', 'b', 'c'], { pods: [pod('a')], health: [health('a')], rebuildRefused: 'the newest backup of EtcdBackup nightly is 90000 s old' });
  assert.deepEqual(plan(lost), { type: 'QuorumLost', reason: '2 of 3 members are gone with their data; a majority is lost; the newest backup of EtcdBackup nightly is 90000 s old' });
});

test('node loss: a member silent on a lost node past the threshold is removed first (the fence), even on a volume; before that, nothing', () => {
  const lost = { pods: [pod('a'), pod('b'), pod('c', { nodeLost: true, ready: false, node: 'n3' })], health: [health('a', { isLeader: true }), health('b')] };
  const early = plan(healthy(['a', 'b', 'c'], { ...lost, claims: ['a', 'b', 'c'], silentForMs: { c: 90_000 }, strandedForMs: { c: 20_000 } }));
  assert.deepEqual(early, { type: 'Wait', awaiting: 'MemberReady', members: ['c'], reason: 'member c is not ready' }, 'not restarted on its volume: its kubelet does not answer');
  const removed = plan(healthy(['a', 'b', 'c'], { ...lost, claims: ['a', 'b', 'c'], silentForMs: { c: 90_000 }, strandedForMs: { c: 31_000 } }));
  assert.equal(removed.type, 'RemoveMember');
  assert.match((removed as { reason: string }).reason, /node n3 is lost and it answered nothing for 31 s/);
  assert.equal(plan(healthy(['a', 'b', 'c'], { ...lost, strandedForMs: { c: 31_000 } })).type, 'RemoveMember', 'without a volume the same');
  // Without a volume, the member threshold applies too, whichever comes first (finding 1: a node cut off for 40 s
  // with a 10 s member threshold; the node is seen NotReady some 15 s in, too late for the node-loss one).
  const replaced = plan(healthy(['a', 'b', 'c'], { ...lost, replaceAfterMs: 10_000, silentForMs: { c: 12_000 }, strandedForMs: { c: 1_000 } }));
  assert.deepEqual([replaced.type, (replaced as { reason?: string }).reason], ['RemoveMember', 'answered nothing for 12 s; replacing it']);
  // One that answers (its kubelet lost the API server, etcd did not) stays.
  const answering = plan(healthy(['a', 'b', 'c'], { pods: lost.pods, strandedForMs: { c: 31_000 } }));
  assert.deepEqual([answering.type, (answering as { cause?: string }).cause], ['Blocked', 'NodeLost'], 'nothing else moves until its node reports again: a person is told');
});

test('fromSurvivor on volumes, 2 of 3 nodes lost: a person is told how to say they are gone; said, the survivor recovers the cluster (issue 32, finding 5)', () => {
  // b and c on lost nodes past the node-loss threshold, their pods and claims still there; a answers alone.
  const lost = healthy(['a', 'b', 'c'], {
    pods: [pod('a', { ready: false }), pod('b', { nodeLost: true, node: 'n2' }), pod('c', { nodeLost: true, node: 'n3' })], claims: ['a', 'b', 'c'],
    health: [health('a', { raftIndex: 70, revision: 33, leaderId: '' })], strandedForMs: { b: 40_000, c: 40_000 }, survivorPolicy: 'auto', targetVersion: '3.5.35',
  });
  const told = plan(lost) as { type: string; cause?: string; reason?: string };
  assert.deepEqual([told.type, told.cause], ['Blocked', 'NodeLost']);
  assert.match(told.reason ?? '', /^only a answers, and pods b, c are on lost nodes n2, n3/);
  assert.match(told.reason ?? '', /kubectl taint node <node> node\.kubernetes\.io\/out-of-service=nodeshutdown:NoExecute.*spec\.restorePolicy recovers the cluster/);
  // The nodes declared shut down: Kubernetes deletes their pods, and their local volumes are stranded (not claims to restart on).
  assert.deepEqual(plan({ ...lost, pods: [pod('a', { ready: false })], claims: ['a'] }),
    { type: 'StartSurvivorRecovery', survivor: 'a', revision: 33, reason: '2 of 3 members are gone with their data; a majority is lost' });
  // Volumes other nodes reach: the members restart on them, nothing is forced.
  assert.deepEqual(plan({ ...lost, pods: [pod('a', { ready: false })] }), { type: 'CreatePod', member: 'b', version: '3.5.35', reason: 'pod gone; rejoining with its data' });
});

test('pods that run but give the operator no member list are waited for within a bound, then named (issue 32, trial 3)', () => {
  const cutOff = healthy(['a', 'b', 'c'], { members: undefined, health: [], claims: ['a', 'b', 'c'], unheardForMs: 30_000 });
  assert.deepEqual(plan(cutOff), { type: 'Wait', awaiting: 'MembersAnswering', members: ['a', 'b', 'c'], reason: 'no member answered; waiting for etcd' });
  const long = plan({ ...cutOff, unheardForMs: 61_000 }) as { type: string; cause?: string; reason?: string };
  assert.deepEqual([long.type, long.cause], ['Blocked', 'Unreachable']);
  assert.match(long.reason ?? '', /^pods a, b, c may run etcd, but none has answered the operator for 61 s/);
});

test('a member added but never started, on a pod of an earlier spec.pod, has its pod made again from the spec (trial of issue 32, finding 2)', () => {
  // A learner kept while no node fits its CPU request; the request is then lowered.
  const kept = healthy(['a', 'b', 'c'], {
    members: [member('a'), member('b'), member('c', { isLearner: true, started: false })],
    pods: [pod('a'), pod('b'), pod('c', { phase: 'Pending', ready: false, unschedulable: true, template: 'cpu-500' })],
    health: [health('a', { isLeader: true }), health('b')], silentForMs: { c: 61_000 }, targetTemplate: 'cpu-100',
  });
  assert.deepEqual(plan(kept), { type: 'DeletePod', member: 'c', deleteClaim: false, reason: 'its etcd never ran; making its pod again from the changed spec.pod' });
  assert.equal(type(plan({ ...kept, targetTemplate: 'cpu-500' })), 'Blocked', 'on the spec\'s template it is kept, as before');
  // A voter added and never started, the same.
  const voter = { ...kept, members: [member('a'), member('b'), member('c', { started: false })] };
  assert.equal((plan(voter) as { member?: string; type: string }).type, 'DeletePod');
  // One that ran is never made again this way: its restart is the roll's.
  assert.notEqual(type(plan({ ...kept, members: [member('a'), member('b'), member('c', { isLearner: true })] })), 'DeletePod');
});

test('node loss: never below a quorum of the desired size; one at a time', () => {
  const pods = [pod('a'), pod('b', { nodeLost: true }), pod('c', { nodeLost: true })];
  const s = healthy(['a', 'b', 'c'], { pods, health: [health('a', { isLeader: true })], strandedForMs: { b: 40_000, c: 40_000 } });
  assert.equal((plan(s) as { cause?: string }).cause, 'NodeLost', 'two of three lost: a quorum is lost, nothing is removed, a person is told');
  assert.equal(plan({ ...s, strandedForMs: { b: 10_000, c: 10_000 } }).type, 'Wait', 'before the threshold, a reboot may bring them back');
  const five = healthy(['a', 'b', 'c', 'd', 'e'], {
    pods: ['a', 'b', 'c', 'd', 'e'].map((n) => pod(n, n === 'd' || n === 'e' ? { nodeLost: true } : {})),
    health: ['a', 'b', 'c'].map((n) => health(n, { isLeader: n === 'a' })), strandedForMs: { d: 40_000, e: 40_000 },
  });
  assert.deepEqual(plan(five), { type: 'RemoveMember', memberId: 'id-d', member: 'd', reason: 'its node  is lost and it answered nothing for 40 s since; removing it (it can never rejoin), then replacing it on a live node' });
});

test('node loss: the removed member\'s pod is deleted at once (force) wherever its node is lost, then a replacement is added', () => {
  const base = healthy(['a', 'b'], { desiredSize: 3 });
  const stuck = plan({ ...base, pods: [...base.pods, pod('c', { nodeLost: true, terminating: true, node: 'n3' })] });
  assert.deepEqual(stuck, { type: 'DeletePod', member: 'c', deleteClaim: false, force: true, reason: 'member removed; its node n3 is lost, so its pod is deleted without waiting for the node' });
  const running = plan({ ...base, pods: [...base.pods, pod('c', { nodeLost: true })] });
  assert.deepEqual(running, { type: 'DeletePod', member: 'c', deleteClaim: false, force: true, reason: 'pod is not a member of the cluster', notMember: true });
  const elsewhere = plan({ ...base, pods: [...base.pods, pod('c', { terminating: true })] });
  assert.equal(elsewhere.type, 'AddMember', 'a stopping pod on a live node is left to stop');
  // A listed member's pod is never force-deleted: it could still run, and a pod of the same name would join beside it.
  const listed = plan(healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b'), pod('c', { nodeLost: true, terminating: true })], health: [health('a', { isLeader: true }), health('b')] }));
  assert.notEqual((listed as { force?: true }).force, true);
});

test('drain: a member on a cordoned node gets its replacement first, then is the one removed; the leader hands over first', () => {
  const pods = [pod('a'), pod('b', { nodeDraining: true, node: 'n2' }), pod('c')];
  assert.deepEqual(plan(healthy(['a', 'b', 'c'], { pods })), { type: 'AddMember', learner: true, version: '3.5.17', reason: 'node n2 is being drained: adding the replacement of b elsewhere first' });
  const four = healthy(['a', 'b', 'c', 'd'], { desiredSize: 3, pods: [...pods, pod('d')] });
  assert.deepEqual(plan(four), { type: 'RemoveMember', memberId: 'id-b', member: 'b', reason: 'scaling down to 3' });
  const leading = healthy(['a', 'b', 'c', 'd'], { desiredSize: 3, pods: [pod('a', { nodeDraining: true }), pod('b'), pod('c'), pod('d')] });
  assert.equal(plan(leading).type, 'MoveLeader');
  assert.equal(plan(healthy(['a', 'b', 'c'], { pods: pods.map((p) => ({ ...p, ready: p.name !== 'c' })) })).type, 'Wait', 'not while a member is unready');
});

test('spreading: members sharing a node while a node is free get one more member, then one of those sharing is removed; never below full size or while unready', () => {
  const pods = [pod('a', { node: 'n1' }), pod('b', { node: 'n2' }), pod('c', { node: 'n2' })];
  assert.deepEqual(plan(healthy(['a', 'b', 'c'], { pods, spreadTo: ['n3'] })), {
    type: 'AddMember', learner: true, version: '3.5.17', spreading: true,
    reason: 'spreading the members: b, c share a node while n3 has none; adding a member there first',
  });
  assert.equal(plan(healthy(['a', 'b', 'c'], { pods })).type, 'Steady', 'no free node (or the move came to nothing lately): nothing');
  assert.equal(plan(healthy(['a', 'b', 'c'], { pods: pods.map((p) => ({ ...p, node: `on-${p.name}` })), spreadTo: ['n3'] })).type, 'Steady', 'one member a node: nothing');
  assert.equal(plan(healthy(['a', 'b', 'c'], { pods: pods.map((p) => ({ ...p, ready: p.name !== 'a' })), spreadTo: ['n3'] })).type, 'Wait');
  const moved = healthy(['a', 'b', 'c', 'd'], { desiredSize: 3, pods: [...pods, pod('d', { node: 'n3' })] });
  assert.deepEqual(plan(moved), { type: 'RemoveMember', memberId: 'id-b', member: 'b', reason: 'scaling down to 3' }, 'one of those sharing n2 goes, not a (alone, leading) nor d');
});

test('the scale-down after a spreading move takes a member off the most crowded node, then zone, not the first sharing one by name (issue 32, finding 14)', () => {
  // Three of five on n1 (a quorum), two on n2; the move added f on the free n3. Removing a (first by name,
  // and sharing n2) would leave the quorum on n1, with no free node left to move it by.
  const on = (node: string, zone: string) => ({ node, zone });
  const where: Record<string, { node: string; zone: string }> = { a: on('n2', 'z2'), b: on('n2', 'z2'), c: on('n1', 'z1'), d: on('n1', 'z1'), e: on('n1', 'z1'), f: on('n3', 'z3') };
  const moved = healthy(['a', 'b', 'c', 'd', 'e', 'f'], { desiredSize: 5, pods: Object.entries(where).map(([name, at]) => pod(name, at)) });
  assert.deepEqual(plan(moved), { type: 'RemoveMember', memberId: 'id-c', member: 'c', reason: 'scaling down to 5' });
  // One member a node, three of four in z1 (a leading): the scale-down takes one from z1, not b, alone in z2.
  const zoned = healthy(['a', 'b', 'c', 'd'], { desiredSize: 3, pods: [pod('a', on('n1', 'z1')), pod('b', on('n2', 'z2')), pod('c', on('n3', 'z1')), pod('d', on('n4', 'z1'))] });
  assert.equal((plan(zoned) as { member?: string }).member, 'c');
});

test('found by the liveness property: what used to wait for ever now acts or says what a person must do (issue 32)', () => {
  // Quorum lost, a member on a volume silent past the threshold: restarted on its data, no quorum needed.
  const lost = healthy(['a', 'b', 'c'], { claims: ['b'], pods: [pod('a'), pod('b', { ready: false }), pod('c', { ready: false })], health: [health('a', { isLeader: true })], silentForMs: { b: 90_000, c: 90_000 } });
  assert.deepEqual(plan(lost), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'quorum lost and it answered nothing past the threshold; restarting it on its data' });
  // Without a volume nothing brings them back: a person is told, nothing is removed.
  assert.equal((plan({ ...lost, claims: [] }) as { cause?: string }).cause, 'TooFewAnswering');
  // A repair the desired size forbids, with nothing to come back by itself: a person may lower spec.size.
  const short = healthy(['a', 'b', 'c'], { desiredSize: 5, pods: [pod('a'), pod('b')], health: [health('a', { isLeader: true }), health('b')] });
  const blocked = plan(short);
  assert.equal((blocked as { cause?: string }).cause, 'TooFewAnswering');
  assert.match((blocked as { reason: string }).reason, /lower spec\.size to at most 3/);
  // A learner casts no vote: its removal needs no quorum of answering voters.
  const learner = healthy(['a', 'b', 'c', 'd'], { desiredSize: 4, members: ['a', 'b', 'c'].map((n) => member(n)).concat(member('d', { isLearner: true })),
    health: [health('a', { isLeader: true })], silentForMs: { d: 120_000 } });
  assert.equal(plan(learner).type, 'RemoveMember');
  // A bootstrap pod on a lost node, or whose data is gone, cannot finish the bootstrap: a person decides.
  const initial = ['a', 'b'];
  const stalled = healthy([], { desiredSize: 2, bootstrapped: false, members: [member('a'), member('b', { started: false })],
    pods: [pod('a', { bootstrapMembers: initial }), pod('b', { bootstrapMembers: initial, nodeLost: true, ready: false })] });
  assert.equal((plan(stalled) as { cause?: string }).cause, 'BootstrapStalled');
  // One that failed after its etcd ran is restarted on its claim instead.
  const failed = { ...stalled, claims: initial, pods: [pod('a', { bootstrapMembers: initial }), pod('b', { bootstrapMembers: initial, phase: 'Failed', ready: false })] };
  assert.deepEqual(plan(failed), { type: 'DeletePod', member: 'b', deleteClaim: false, reason: 'its pod failed after its etcd ran; restarting it on its data' });
  // No member answers and the only pods are on lost nodes: a person is told.
  const cut = healthy(['a'], { members: undefined, health: [], claims: ['a'], pods: [pod('a', { nodeLost: true, node: 'n1', ready: false })] });
  assert.equal((plan(cut) as { cause?: string }).cause, 'NodeLost');
  // A member that answers on a lost node while its pod is stopping: the pod never stops there (review 7).
  const stuck = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b'), pod('c', { terminating: true, nodeLost: true, node: 'n3' })] });
  assert.equal((plan(stuck) as { cause?: string }).cause, 'NodeLost');
  // No member answers and the recorded member's volume came back empty: its claim holds nothing, a majority is lost (review 7).
  const emptied = healthy(['a'], { members: undefined, health: [], claims: ['a'], pods: [pod('a', { dataLost: true, ready: false })] });
  assert.equal(plan(emptied).type, 'QuorumLost');
});

test('antiAffinity on too few nodes: no bootstrap of members that can never run, and no member added that cannot be placed (issue 32, finding 13)', () => {
  const fresh = healthy([], { desiredSize: 5, bootstrapped: false, members: undefined, placeableNodes: ['n1', 'n2', 'n3'] });
  const refused = plan(fresh);
  assert.equal((refused as { cause?: string }).cause, 'TooFewNodes');
  assert.match((refused as { reason: string }).reason, /3 node\(s\) can take one \(n1, n2, n3.*fewer than the 5 members: add nodes, lower spec\.size to 3, or set antiAffinity to false/);
  assert.deepEqual(plan({ ...fresh, desiredSize: 3 }), { type: 'Bootstrap', size: 3, version: '3.5.17' });
  assert.deepEqual(plan({ ...fresh, singleFounder: true }), { type: 'Bootstrap', size: 1, version: '3.5.17' }, 'a restore starts one founder; the others join as nodes allow');
  // Running at three of five, one member per node: the scale-up says what is missing instead of adding a member that never runs.
  const short = healthy(['a', 'b', 'c'], { desiredSize: 5, pods: ['a', 'b', 'c'].map((n, i) => pod(n, { node: `n${i + 1}` })), placeableNodes: ['n1', 'n2', 'n3'] });
  const blocked = plan(short);
  assert.equal((blocked as { cause?: string }).cause, 'TooFewNodes');
  assert.match((blocked as { reason: string }).reason, /^scaling up to 5, but .* the cluster stays at 3 member\(s\)/);
  assert.equal(plan({ ...short, placeableNodes: ['n1', 'n2', 'n3', 'n4'] }).type, 'AddMember', 'a node added: the member is added');
  // A drain with every other node holding a member: the drain holds, and says why.
  const draining = { ...short, desiredSize: 3, pods: [pod('a', { node: 'n1' }), pod('b', { node: 'n2', nodeDraining: true }), pod('c', { node: 'n3' })], placeableNodes: ['n1', 'n3'] };
  assert.match((plan(draining) as { reason: string }).reason, /^node n2 is being drained: adding the replacement of b elsewhere first, but/);
  // A node whose member's pod is still stopping frees itself: that is a wait, not a person's.
  const stopping = { ...short, desiredSize: 3, members: ['a', 'b'].map((n) => member(n)), health: [health('a', { isLeader: true }), health('b')],
    pods: [pod('a', { node: 'n1' }), pod('b', { node: 'n2' }), pod('c', { node: 'n3', terminating: true })] };
  assert.deepEqual(plan(stopping), { type: 'Wait', awaiting: 'PodStopping', members: ['c'], reason: 'scaling up to 3: waiting for node n3 to be free' });
});

test('a learner no node fits is kept while it would only be added again, not removed and re-added with a new claim each minute (issue 32, finding 6)', () => {
  const unplaced = pod('d', { phase: 'Pending', ready: false, neverRan: true, unschedulable: true,
    trouble: { reason: 'Unschedulable', message: 'member pod d cannot be scheduled: 0/3 nodes are available' } });
  // A drain's replacement: b's node is cordoned, and no other node has room for d.
  const drain = healthy(['a', 'b', 'c', 'd'], { desiredSize: 3, members: ['a', 'b', 'c'].map((n) => member(n)).concat(member('d', { isLearner: true })),
    pods: [pod('a'), pod('b', { nodeDraining: true, node: 'n2' }), pod('c'), unplaced], claims: ['a', 'b', 'c', 'd'],
    health: [health('a', { isLeader: true }), health('b'), health('c')], silentForMs: { d: 120_000 } });
  const kept = plan(drain);
  assert.equal((kept as { cause?: string }).cause, 'TooFewNodes');
  assert.match((kept as { reason: string }).reason, /^member pod d cannot be scheduled: 0\/3 nodes are available\. Learner d is kept, .*\(node n2 is being drained: adding the replacement of b elsewhere first\)/);
  // A scale-up's member likewise.
  assert.equal((plan({ ...drain, desiredSize: 4, pods: [pod('a'), pod('b'), pod('c'), unplaced] }) as { cause?: string }).cause, 'TooFewNodes');
  // Something else to do without it (a voter silent past the threshold to restart): it is removed, as it casts no vote.
  const repair = { ...drain, health: drain.health.filter((h) => h.name !== 'c'), silentForMs: { c: 90_000, d: 120_000 } };
  assert.deepEqual(plan(repair), { type: 'RemoveMember', memberId: 'id-d', member: 'd', reason: 'learner never answered; removing it' });
  // Not needed any more (the drain was called off): removed.
  assert.equal(plan({ ...drain, pods: [pod('a'), pod('b'), pod('c'), unplaced] }).type, 'RemoveMember');
  // A learner silent for another reason (its pod scheduled, etcd not answering) is removed as before.
  assert.equal(plan({ ...drain, pods: [pod('a'), pod('b', { nodeDraining: true }), pod('c'), pod('d', { ready: false })] }).type, 'RemoveMember');
});

test('a learner that answers but comes no closer to the leader is waited for only up to the bound, then removed if a repair waits on it, else kept and named (issue 32, finding 7)', () => {
  // A scale-up to 4: d answers, 99 entries behind the leader's 100 (learnerMaxLag 10).
  const s = healthy(['a', 'b', 'c', 'd'], { desiredSize: 4, members: ['a', 'b', 'c'].map((n) => member(n)).concat(member('d', { isLearner: true })),
    claims: ['a', 'b', 'c', 'd'], health: [health('a', { isLeader: true }), health('b'), health('c'), health('d', { raftIndex: 1 })] });
  const waiting = { type: 'Wait', awaiting: 'CatchingUp', members: ['d'], reason: 'learner d catching up' };
  assert.deepEqual(plan({ ...s, stalledForMs: { d: 599_000 } }), waiting, 'within the bound it may still come closer');
  // Past the bound, the plan without it would only add it again: it is kept, and a person told.
  const kept = plan({ ...s, stalledForMs: { d: 601_000 } });
  assert.equal((kept as { cause?: string }).cause, 'CatchUpStalled');
  assert.match((kept as { reason: string }).reason, /^learner d answers but has come no closer to the leader's log for over 600 s \(99 raft entries behind the leader\): check its disk and network .* it is kept, not removed and added again \(scaling up to 4\); .*remove it from etcd \(etcdctl member remove/);
  // A voter silent past the threshold waits on it: it goes, and the repair follows.
  const repair = { ...s, health: s.health.filter((h) => h.name !== 'c'), silentForMs: { c: 90_000 } };
  assert.deepEqual(plan({ ...repair, stalledForMs: { d: 599_000 } }), waiting, 'within the bound the repair waits');
  assert.deepEqual(plan({ ...repair, stalledForMs: { d: 601_000 } }),
    { type: 'RemoveMember', memberId: 'id-d', member: 'd', reason: 'learner came no closer to the leader\'s log for over 600 s and holds a repair back; removing it' });
  // Not judged on it: a learner that does not answer (the silence rule's), or one caught up (promoted).
  assert.deepEqual(plan({ ...s, health: s.health.filter((h) => h.name !== 'd'), stalledForMs: { d: 601_000 } }), waiting);
  assert.equal(plan({ ...s, health: [...s.health.slice(0, 3), health('d', { raftIndex: 95 })], stalledForMs: { d: 601_000 } }).type, 'PromoteLearner');
});

test('the members timed for catching up: those that answer more than learnerMaxLag behind the leader the voters agree on, or all that answer without one', () => {
  const members = ['a', 'b', 'c'].map((n) => member(n)).concat(member('d', { isLearner: true }));
  const statuses = [health('a', { isLeader: true, raftIndex: 500 }), health('b', { raftIndex: 495 }), health('d', { raftIndex: 100 })];
  assert.deepEqual(membersBehind(members, statuses, 10), new Map([['d', 400]]), 'b is within the lag, c does not answer');
  const leaderless = statuses.map((h) => ({ ...h, isLeader: false, leaderId: '' }));
  assert.deepEqual(membersBehind(members, leaderless, 10), new Map([['a', Infinity], ['b', Infinity], ['d', Infinity]]));
});

test('a voter that answers but comes no closer to the leader holds a roll only up to the bound, then is named, never removed for it (issue 32)', () => {
  const behind = rolling('3.5.35', { health: [health('a', { isLeader: true, raftIndex: 500 }), health('b', { raftIndex: 500 }), health('c', { raftIndex: 100 })] });
  assert.equal(plan({ ...behind, stalledForMs: { c: 599_000 } }).type, 'Wait');
  const stalled = plan({ ...behind, stalledForMs: { c: 601_000 } });
  assert.equal((stalled as { cause?: string }).cause, 'CatchUpStalled');
  assert.match((stalled as { reason: string }).reason, /^member c answers but has come no closer to the leader's log for over 600 s \(400 raft entries behind the leader\): .*the roll waits for it/);
});

test('under CORRUPT, a voter silent past the threshold is removed once the others agree, not waited for for ever (issue 32)', () => {
  const s = healthy(['a', 'b', 'c'], { alarms: [{ memberId: 'id-c', alarm: 'CORRUPT' }], claims: ['a', 'b', 'c'], health: [health('a', { isLeader: true }), health('b')],
    corruptionCheck: { revision: 40, hashes: { a: 1, b: 1 } } });
  assert.deepEqual(plan({ ...s, silentForMs: { c: 50_000 } }),
    { type: 'Wait', awaiting: 'MembersAnswering', members: ['c'], reason: 'CORRUPT: the members that answered agree at revision 40; waiting for the others\' HashKV' });
  // Removed, not restarted on its data (the data in question), although it has a claim.
  const silent = { ...s, silentForMs: { c: 61_000 } };
  assert.deepEqual(plan(silent), { type: 'RemoveMember', memberId: 'id-c', member: 'c',
    reason: 'CORRUPT: the members that answered agree at revision 40, and it answered nothing past the threshold, so its data cannot be checked; replacing it' });
  // The repair rules still judge the removal: too few would answer for the size asked.
  assert.equal((plan({ ...silent, desiredSize: 5 }) as { cause?: string }).cause, 'TooFewAnswering');
  // No quorum agreeing: a person decides, as before.
  assert.equal(plan({ ...silent, corruptionCheck: { revision: 40, hashes: { a: 1, b: 2 } } }).type, 'CorruptionUndecided');
  // Its pod stopping is waited for, and named past the bound.
  const stopping = { ...s, pods: [pod('a'), pod('b'), pod('c', { terminating: true })] };
  assert.equal(plan({ ...stopping, stoppingForMs: { c: 60_000 } }).type, 'Wait');
  assert.equal((plan({ ...stopping, stoppingForMs: { c: 301_000 } }) as { cause?: string }).cause, 'PodStuckStopping');
});

test('a pod stopping past the bound on a live node is named for a person, never forced by the operator (issue 32, finding 7)', () => {
  const s = healthy(['a', 'b', 'c'], { pods: [pod('a'), pod('b'), pod('c', { terminating: true, node: 'n3' })], health: [health('a', { isLeader: true }), health('b')] });
  assert.deepEqual(plan({ ...s, stoppingForMs: { c: 60_000 } }), { type: 'Wait', awaiting: 'PodStopping', members: ['c'], reason: 'the pod of member c is stopping' });
  const stuck = plan({ ...s, stoppingForMs: { c: 301_000 } });
  assert.equal((stuck as { cause?: string }).cause, 'PodStuckStopping');
  assert.match((stuck as { reason: string }).reason, /^the pod of member c is stopping, but pod c has been stopping for over 300 s on a live node: .*kubectl delete pod --force --grace-period=0 c$/);
  // On a lost node it is no person's: its silent member is fenced past the node-loss threshold, then its pod forced.
  const stranded = { ...s, pods: [pod('a'), pod('b'), pod('c', { terminating: true, node: 'n3', nodeLost: true })], stoppingForMs: { c: 301_000 } };
  assert.deepEqual(plan({ ...stranded, strandedForMs: { c: 20_000 } }), { type: 'Wait', awaiting: 'PodStopping', members: ['c'], reason: 'the pod of member c is stopping' });
  assert.equal(plan({ ...stranded, strandedForMs: { c: 31_000 } }).type, 'RemoveMember');
});

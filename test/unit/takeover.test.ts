// Issue 33: clusters the CoreOS etcd-operator made are taken over in place, or left alone with the reason.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { plan } from '../../src/etcd/planner.js';
import type { Action, ClusterState, MemberHealth, MemberView, PodView } from '../../src/etcd/planner.js';
import { CoreosLockWatch } from '../../src/controllers/cluster/coreos-lock.js';

const coreosPod = (name: string, o: Partial<PodView> = {}): PodView =>
  ({ name, phase: 'Running', ready: true, terminating: false, version: '3.5.35', config: '', template: '', metadata: '', forced: false, dataLost: false, madeByCoreOS: true, ...o });
const member = (name: string, o: Partial<MemberView> = {}): MemberView => ({ id: `id-${name}`, name, isLearner: false, started: true, ...o });
const health = (name: string): MemberHealth => ({ name, raftIndex: 100, isLeader: name === 'a', leaderId: 'id-a', revision: 50, dbSize: 1000, dbSizeInUse: 900 });

/** A settled 3-member cluster the CoreOS operator made, its operator stopped, not yet this operator's. */
function coreosCluster(o: Partial<ClusterState> = {}): ClusterState {
  const names = ['a', 'b', 'c'];
  return {
    desiredSize: 3, paused: false, bootstrapped: false,
    pods: names.map((n) => coreosPod(n)), claims: [], claimMarks: { neverRan: [], started: [], setAside: [] }, retained: [],
    members: names.map((n) => member(n)), recordedMembers: [], health: names.map(health),
    supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: {}, silentForMs: {}, stoppingForMs: {}, stuckStoppingAfterMs: 300_000, unclaimedForMs: {}, claimGraceMs: 600_000, learnerMaxLag: 10, stalledForMs: {}, stalledAfterMs: 600_000,
    targetVersion: '3.5.35', targetConfig: 'cfg', targetTemplate: 'tpl', targetMetadata: '', alarms: [], quotaBackendBytes: 2 ** 31,
    ...o,
  };
}

const refusal = (a: Action): string => (a.type === 'Blocked' && a.cause === 'TakeoverUnsafe' ? a.reason : `not refused: ${JSON.stringify(a)}`);

test('a settled CoreOS cluster is taken over in place: first its pods get the spec\'s records, then, once they are seen, status records it; nothing restarted', () => {
  assert.deepEqual(plan(coreosCluster()), {
    type: 'TakeOver', members: ['a', 'b', 'c'], config: 'cfg', template: 'tpl',
    reason: 'members a, b, c, made by the CoreOS etcd-operator, all answer one leader: taking them over in place, nothing restarted',
  });
  const recorded = coreosCluster({ pods: ['a', 'b', 'c'].map((n) => coreosPod(n, { config: 'cfg', template: 'tpl' })) });
  assert.deepEqual(plan(recorded), { type: 'RecordTakeover', members: ['a', 'b', 'c'] });
  // One pod not seen with its record yet (a cache behind the patch): the records first, again.
  assert.equal(plan({ ...recorded, pods: [...recorded.pods.slice(0, 2), coreosPod('c')] }).type, 'TakeOver');
  // Recorded: steady on the CoreOS pods; the next version replaces them, one at a time, adding first (no claims).
  const taken = { ...recorded, bootstrapped: true };
  assert.equal(plan(taken).type, 'Steady');
  assert.equal(plan({ ...taken, targetVersion: '3.6.5' }).type, 'AddMember');
  // An upgrade the CoreOS operator left half done is finished by this operator's roll.
  const halfUpgraded = coreosCluster({ pods: [coreosPod('a'), coreosPod('b'), coreosPod('c', { version: '3.5.17' })] });
  assert.equal(plan(halfUpgraded).type, 'TakeOver');
});

test('a CoreOS cluster in a state not safe to take over is left alone, saying what to do by hand, never to start the CoreOS operator again', () => {
  const refusals = [
    // Its operator stopped between adding a member and making its pod: an unfinished scale.
    [coreosCluster({ members: [...['a', 'b', 'c'].map((n) => member(n)), member('d', { started: false })] }), /members d \(ID id-d\) were added and never started.*scale the CoreOS operator left unfinished\. Remove them \(etcdctl member remove <id>\)/],
    [coreosCluster({ members: [member('a'), member('b')] }), /pods c are no members of etcd.*kubectl delete pod c/],
    [coreosCluster({ pods: [coreosPod('a'), coreosPod('b')] }), /members c \(ID id-c\) have no pod.*remove them \(etcdctl member remove <id>\)/],
    [coreosCluster({ pods: [coreosPod('a'), coreosPod('b'), coreosPod('c', { phase: 'Failed', ready: false })], health: [health('a'), health('b')] }), /pods of members c \(ID id-c\) failed, and CoreOS's pods never restart/],
    [coreosCluster({ health: [health('a'), health('b')], silentForMs: { c: 61_000 } }), /members c have not answered for over 60 s/],
    [coreosCluster({ pods: [coreosPod('a'), coreosPod('b'), coreosPod('c', { version: '3.7.0' })], targetVersion: '3.5.35' }), /members run 3\.5\.35, 3\.7\.0, and spec\.version 3\.5\.35 cannot be rolled out from them/],
    [coreosCluster({ pods: ['a', 'b', 'c'].map((n) => coreosPod(n, { version: '3.4.27' })), targetVersion: '3.4.27' }), /etcd 3\.4\.27, older than 3\.5\.0.*upgrade them with the CoreOS operator first/],
    [coreosCluster({ claims: ['a', 'b', 'c'] }), /on volumes.*restore it under a new name/],
    [coreosCluster({ members: undefined, health: [] }), /no member of a, b, c answered/],
    [coreosCluster({ pods: [coreosPod('a'), coreosPod('b'), { ...coreosPod('c'), madeByCoreOS: undefined }] }), /pods c were not made by the CoreOS operator/],
  ] as const;
  for (const [state, expected] of refusals) {
    const reason = refusal(plan(state));
    assert.match(reason, expected);
    assert.doesNotMatch(reason, /start the CoreOS operator again|start it again/i, 'never advice that would make it act on this cluster');
  }
  // A member silent for less than the bound is waited for; a pod stopping too.
  assert.equal((plan(coreosCluster({ health: [health('a'), health('b')], silentForMs: { c: 5000 } })) as { awaiting?: string }).awaiting, 'MembersAnswering');
  const stopping = coreosCluster({ pods: [coreosPod('a'), coreosPod('b'), coreosPod('c', { terminating: true })] });
  assert.equal((plan(stopping) as { awaiting?: string }).awaiting, 'PodStopping');
});

test('while the CoreOS operator may still act, nothing is done, before a takeover or after one', () => {
  const activity = 'the CoreOS etcd-operator may still run: x holds its leader lock';
  const blocked = { type: 'Blocked', cause: 'CoreOSOperatorRunning', reason: activity };
  assert.deepEqual(plan(coreosCluster({ coreosOperatorActivity: activity })), blocked);
  const taken = coreosCluster({ bootstrapped: true, desiredSize: 5, pods: ['a', 'b', 'c'].map((n) => coreosPod(n, { config: 'cfg', template: 'tpl' })), coreosOperatorActivity: activity });
  assert.deepEqual(plan(taken), blocked, 'no scale while it may act too');
});

test('the CoreOS operator\'s leader lock is judged by when this process saw it change, on its own clock: never by the renewer\'s wall time', () => {
  const lock = (record: unknown) => ({ metadata: { annotations: { 'control-plane.alpha.kubernetes.io/leader': typeof record === 'string' ? record : JSON.stringify(record) } } });
  // Wall times far in the past or the future say nothing: only a change seen does.
  const at = (renewTime: string) => lock({ holderIdentity: 'etcd-operator-5f7d', leaseDurationSeconds: 15, renewTime });
  const watch = new CoreosLockWatch();
  assert.match(watch.observe('ns', at('2020-01-01T00:00:00Z'), 0, true) ?? '', /etcd-operator-5f7d holds its leader lock \(Endpoints etcd-operator in ns\), first read now.*If it runs, delete its Deployment/);
  assert.match(watch.observe('ns', at('2020-01-01T00:00:00Z'), 59_000, true) ?? '', /unchanged for 59 s/);
  assert.equal(watch.observe('ns', at('2020-01-01T00:00:00Z'), 60_000, true), undefined, 'unchanged a minute: stopped');
  assert.match(watch.observe('ns', at('2099-01-01T00:00:02Z'), 61_000, true) ?? '', /renewed since it was last read/, 'a renewal seen: it runs');
  assert.equal(watch.observe('ns', at('2099-01-01T00:00:02Z'), 121_000, true), undefined);
  // After a takeover, a lock first seen (this operator restarted) is no renewal: only a change seen is.
  const after = new CoreosLockWatch();
  assert.equal(after.observe('ns', at('2026-11-27T03:00:00Z'), 0, false), undefined);
  assert.match(after.observe('ns', at('2026-11-27T03:00:02Z'), 2000, false) ?? '', /renewed since it was last read/);
  // One namespace, two clusters: one taken over (a first sight is no renewal for it) must not make the other's first sight count as old.
  const shared = new CoreosLockWatch();
  assert.equal(shared.observe('ns', at('2026-11-27T03:00:00Z'), 0, false), undefined);
  assert.match(shared.observe('ns', at('2026-11-27T03:00:00Z'), 1000, true) ?? '', /unchanged for 1 s/);
  assert.equal(shared.observe('ns', at('2026-11-27T03:00:00Z'), 60_000, true), undefined);
  // A longer lease waits three of its durations.
  const slow = new CoreosLockWatch();
  slow.observe('ns', lock({ holderIdentity: 'x', leaseDurationSeconds: 30 }), 0, true);
  assert.match(slow.observe('ns', lock({ holderIdentity: 'x', leaseDurationSeconds: 30 }), 60_000, true) ?? '', /counts as stopped once unchanged for 90 s/);
  // No lock, a released one, one that cannot be read.
  assert.equal(new CoreosLockWatch().observe('ns', undefined, 0, true), undefined);
  assert.equal(new CoreosLockWatch().observe('ns', lock({ holderIdentity: '' }), 0, true), undefined);
  assert.match(new CoreosLockWatch().observe('ns', lock('{not json'), 0, true) ?? '', /cannot be read/);
});

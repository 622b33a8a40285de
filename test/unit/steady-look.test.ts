import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SteadyLooks, WHOLE_LOOK_EVERY_MS, nothingTimed } from '../../src/controllers/cluster/steady-look.js';
import type { EtcdStatus } from '../../src/etcd/client.js';
import { STEADY_LOOK_MS } from '../../src/controllers/cluster/execute.js';

const status = (memberId: string, leaderId: string, o: Partial<EtcdStatus> = {}): EtcdStatus => ({
  memberId, leaderId, raftIndex: 100, raftTerm: 2, revision: 50, dbSize: 20480, dbSizeInUse: 16384, version: '3.5.17', isLearner: false, errors: [], storageVersion: '', downgradeTarget: '', ...o,
});
const url = (member: string): string => `http://${member}:2379`;
/** etcd answering each URL with the status given, or failing; the URLs asked are kept. */
const etcdAnswering = (answers: Record<string, EtcdStatus | Error>): { asked: string[]; status: (u: string) => Promise<EtcdStatus> } => {
  const asked: string[] = [];
  return {
    asked,
    status: (u) => {
      asked.push(u);
      const a = answers[u];
      return a instanceof Error || a === undefined ? Promise.reject(a ?? new Error('no member there')) : Promise.resolve(a);
    },
  };
};

test('a steady cluster whose leader answers as it did at the whole pass is unchanged: the leader alone is asked', async () => {
  const looks = new SteadyLooks();
  const statuses = new Map([['m-1', status('1', '2')], ['m-2', status('2', '2')], ['m-3', status('3', '2')]]);
  looks.record('ns/c', '7', statuses, url, 0);
  const etcd = etcdAnswering({ [url('m-2')]: status('2', '2') });
  assert.equal(await looks.unchanged('ns/c', '7', etcd, 30_000), true);
  assert.deepEqual(etcd.asked, [url('m-2')]);
});

test('anything etcd changed through raft, the object changed, no answer, or the whole-look bound passed: a whole pass looks', async () => {
  const looks = new SteadyLooks();
  looks.record('ns/c', '7', new Map([['m-1', status('1', '1')]]), url, 0);
  const changed: [string, Partial<EtcdStatus>][] = [
    ['a write (raft index)', { raftIndex: 101 }], ['an election (term)', { raftTerm: 3 }], ['an alarm', { errors: ['memberID:1 alarm:NOSPACE'] }],
    ['its database grew', { dbSize: 40960 }], ['another leader', { leaderId: '9' }],
  ];
  for (const [what, change] of changed) {
    assert.equal(await looks.unchanged('ns/c', '7', etcdAnswering({ [url('m-1')]: status('1', '1', change) }), 1000), false, what);
  }
  assert.equal(await looks.unchanged('ns/c', '8', etcdAnswering({ [url('m-1')]: status('1', '1') }), 1000), false, 'the EtcdCluster changed');
  assert.equal(await looks.unchanged('ns/c', '7', etcdAnswering({}), 1000), false, 'the leader did not answer');
  const lastLight = WHOLE_LOOK_EVERY_MS - STEADY_LOOK_MS;
  assert.equal(await looks.unchanged('ns/c', '7', etcdAnswering({ [url('m-1')]: status('1', '1') }), lastLight), true, 'the next look still within the bound');
  assert.equal(await looks.unchanged('ns/c', '7', etcdAnswering({ [url('m-1')]: status('1', '1') }), lastLight + 1), false, 'the next look would be past it: a whole pass now');
  assert.equal(await looks.unchanged('ns/c', '7', etcdAnswering({ [url('m-1')]: status('1', '1') }), WHOLE_LOOK_EVERY_MS - 1), false, 'a timer a little early buys no light look more');
  assert.equal(looks.has('ns/c'), true);
  looks.forget('ns/c');
  assert.equal(looks.has('ns/c'), false);
  assert.equal(await looks.unchanged('ns/c', '7', etcdAnswering({ [url('m-1')]: status('1', '1') }), 1000), false, 'forgotten after a pass that was not steady');
});

test('nothing is recorded without a leader among the statuses, or without the object\'s version', async () => {
  const looks = new SteadyLooks();
  const etcd = etcdAnswering({ [url('m-1')]: status('1', '') });
  looks.record('ns/c', '7', new Map([['m-1', status('1', '')]]), url, 0);
  assert.equal(await looks.unchanged('ns/c', '7', etcd, 1000), false);
  looks.record('ns/c', undefined, new Map([['m-1', status('1', '1')]]), url, 0);
  assert.equal(await looks.unchanged('ns/c', undefined, etcdAnswering({ [url('m-1')]: status('1', '1') }), 1000), false);
  assert.deepEqual(etcd.asked, []);
});

test('a whole look comes by the time something is due (a certificate\'s renewal), however soon', async () => {
  const looks = new SteadyLooks();
  const answering = (): ReturnType<typeof etcdAnswering> => etcdAnswering({ [url('m-1')]: status('1', '1') });
  looks.record('ns/c', '7', new Map([['m-1', status('1', '1')]]), url, 0, 60_000);
  assert.equal(await looks.unchanged('ns/c', '7', answering(), 30_000), true, 'the next look is by the renewal');
  assert.equal(await looks.unchanged('ns/c', '7', answering(), 30_001), false, 'the next look would be after it');
  looks.record('ns/c', '7', new Map([['m-1', status('1', '1')]]), url, 0, -5);
  assert.equal(await looks.unchanged('ns/c', '7', answering(), 0), false, 'overdue: a whole pass at once');
});

test('nothing timed: no member silent, stranded, stopping or stalled, no claim in its grace, the member list heard', () => {
  const none = { silentForMs: {}, strandedForMs: {}, unclaimedForMs: {}, stoppingForMs: {}, stalledForMs: {} };
  assert.equal(nothingTimed(none), true);
  assert.equal(nothingTimed({ ...none, noSpaceDisarmedForMs: 5_000 }), true, 'the time since a disarm only grows');
  for (const timed of ['silentForMs', 'strandedForMs', 'unclaimedForMs', 'stoppingForMs', 'stalledForMs'] as const) {
    assert.equal(nothingTimed({ ...none, [timed]: { 'c-1': 10 } }), false, timed);
  }
  assert.equal(nothingTimed({ ...none, unheardForMs: 0 }), false, 'unheard');
});

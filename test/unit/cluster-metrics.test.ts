import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Registry } from '../../src/runtime/prometheus.js';
import { clusterStatus } from '../../src/controllers/cluster/status.js';
import { actionTaken, healthReading } from '../../src/controllers/cluster/health-reading.js';
import { ClusterMetrics } from '../../src/runtime/cluster-metrics.js';
import type { Action, ClusterState } from '../../src/etcd/planner.js';
import { NOW, cluster, h, reports, state } from './status-fixtures.js';

const reading = (s: ClusterState, bootstrapped = true): ReturnType<typeof healthReading> =>
  healthReading(s, clusterStatus(cluster({ status: { bootstrapped } }), s, { type: 'Steady' }, reports(['3.5.17', '3.5.17', '3.5.17']), NOW));

/** The exposition's lines for one metric, without HELP and TYPE. */
async function lines(registry: Registry, name: string): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith(`${name}{`) || l.startsWith(`${name} `));
}

test('the quorum margin counts voters answering against a quorum of them, and of those recorded when none answers', () => {
  assert.equal(reading(state()).quorumMargin, 1, 'three of three: one may be lost');
  assert.equal(reading(state({ health: [h('a', { isLeader: true }), h('b')] })).quorumMargin, 0, 'two of three: one loss from stopping');
  assert.equal(reading(state({ health: [h('a', { isLeader: true })] })).quorumMargin, -1, 'one of three: stopped');
  // No member answered: no member list, and the voters recorded are those a quorum is counted of.
  assert.equal(reading(state({ members: undefined, health: [] })).quorumMargin, -2);
  assert.equal(reading(state({ bootstrapped: false }), false).quorumMargin, undefined, 'nothing to lose before the first bootstrap');
});

test('a reading counts voters and learners, alarms by kind, and a roll under way', () => {
  const learning = state({ members: [...state().members ?? [], { id: 'd', name: 'd', isLearner: true, started: true }], alarms: [{ memberId: 'a', alarm: 'NOSPACE' }] });
  const r = reading(learning);
  assert.deepEqual([r.desired, r.voting, r.learners, r.alarms.NOSPACE, r.alarms.CORRUPT], [3, 3, 1, 1, 0]);
  const upgrading = reading(state({ targetVersion: '3.5.35' }));
  assert.equal(upgrading.rollPending, 3, 'every member still on 3.5.17');
  assert.equal(reading(state()).rollPending, 0);
});

test('a member removed while the cluster is at or below its size is a replacement; one scaled away is not; disarms name their alarms', () => {
  const remove = { type: 'RemoveMember', memberId: 'c', member: 'c', reason: 'x' } as const;
  assert.equal(actionTaken(state(), remove).replacement, true);
  assert.equal(actionTaken(state({ desiredSize: 1 }), remove).replacement, false);
  assert.equal(actionTaken(state(), { type: 'Steady' }).replacement, false);
  const disarm: Action = { type: 'DisarmAlarms', reason: 'x', alarms: [{ memberId: 'a', alarm: 'NOSPACE' }, { memberId: 'b', alarm: 'NOSPACE' }] };
  assert.deepEqual(actionTaken(state(), disarm), { action: 'DisarmAlarms', replacement: false, disarmed: ['NOSPACE'] });
});

test('cluster series: labelled by namespace and cluster only, phases and leaders replaced, everything dropped with the cluster or the lead', async () => {
  const registry = new Registry();
  const metrics = new ClusterMetrics(registry);
  const o = metrics.observer;
  o.observed('db', 'main', { ...reading(state()), phase: 'Creating', leader: 'a' });
  o.observed('db', 'main', { ...reading(state()), phase: 'Running', leader: 'a' });
  o.observed('db', 'main', { ...reading(state()), phase: 'Running', leader: 'b' });
  o.acted('db', 'main', { action: 'AddMember', replacement: false, disarmed: [] }, 1_000);
  o.acted('db', 'main', { action: 'RemoveMember', replacement: true, disarmed: [] }, 2_000);
  o.acted('db', 'main', { action: 'DisarmAlarms', replacement: false, disarmed: ['NOSPACE'] }, 3_000);
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_phase'), ['etcd_operator_cluster_phase{namespace="db",etcd_cluster="main",phase="Running"} 1']);
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_leader_changes_total'), ['etcd_operator_cluster_leader_changes_total{namespace="db",etcd_cluster="main"} 1']);
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_quorum_margin'), ['etcd_operator_cluster_quorum_margin{namespace="db",etcd_cluster="main"} 1']);
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_member_replacements_total'), ['etcd_operator_cluster_member_replacements_total{namespace="db",etcd_cluster="main"} 1']);
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_last_action_timestamp_seconds'),
    ['etcd_operator_cluster_last_action_timestamp_seconds{namespace="db",etcd_cluster="main",action="DisarmAlarms"} 3']);
  assert.equal((await lines(registry, 'etcd_operator_cluster_actions_total')).length, 3);
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_alarms_disarmed_total'), [
    'etcd_operator_cluster_alarms_disarmed_total{namespace="db",etcd_cluster="main",alarm="NOSPACE"} 1',
    'etcd_operator_cluster_alarms_disarmed_total{namespace="db",etcd_cluster="main",alarm="CORRUPT"} 0',
  ], 'counted from 0, so the first disarm is an increase');
  assert.equal((await lines(registry, 'etcd_operator_cluster_observed_timestamp_seconds')).length, 1);
  // A light look that found it unchanged: the series hold as of now. One of a cluster never observed makes none.
  const observedAt = async (): Promise<number> => Number((await lines(registry, 'etcd_operator_cluster_observed_timestamp_seconds'))[0]?.split(' ')[1]);
  const before = await observedAt();
  await new Promise((r) => setTimeout(r, 20));
  o.confirmed('db', 'main');
  o.confirmed('db', 'never-observed');
  assert.ok(await observedAt() > before);
  assert.equal((await lines(registry, 'etcd_operator_cluster_observed_timestamp_seconds')).length, 1);

  // A pass stopped by its configuration: degraded, and whether it serves not claimed from an older pass.
  o.misconfigured('db', 'main');
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_degraded'), ['etcd_operator_cluster_degraded{namespace="db",etcd_cluster="main"} 1']);
  assert.deepEqual([...await lines(registry, 'etcd_operator_cluster_available'), ...await lines(registry, 'etcd_operator_cluster_quorum_margin')], []);
  assert.deepEqual(await lines(registry, 'etcd_operator_cluster_roll_members_pending'), ['etcd_operator_cluster_roll_members_pending{namespace="db",etcd_cluster="main"} 0']);

  o.observed('db', 'other', reading(state()));
  o.gone('db', 'main');
  const left = (await registry.metrics()).split('\n').filter((l) => l.startsWith('etcd_operator_cluster_'));
  assert.ok(left.length > 0 && left.every((l) => l.includes('etcd_cluster="other"')), left.join('\n'));
  metrics.reset();
  assert.deepEqual((await registry.metrics()).split('\n').filter((l) => l.startsWith('etcd_operator_cluster_')), [], 'a process that stops leading reports no cluster');
});

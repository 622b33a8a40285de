import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clusterStatus } from '../../src/controllers/cluster/status.js';
import { conditionEvents } from '../../src/controllers/cluster/condition-events.js';
import type { ClusterSpec, EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { ClusterState } from '../../src/etcd/planner.js';

const cluster = (spec: ClusterSpec, status: EtcdCluster['status'] = { bootstrapped: true }): EtcdCluster => ({
  apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdCluster', metadata: { name: 'ex', namespace: 'ns', uid: 'u', generation: 2 }, spec, status,
});
const state: ClusterState = {
  desiredSize: 1, paused: false, bootstrapped: true,
  pods: [{ name: 'a', phase: 'Running', ready: true, terminating: false, version: '3.5.17', config: '', template: '', metadata: '', forced: false, dataLost: false }],
  claims: [], claimMarks: { neverRan: [], started: [], setAside: [] }, retained: [], members: [{ id: 'a', name: 'a', isLearner: false, started: true }], recordedMembers: ['a'],
  health: [{ name: 'a', raftIndex: 9, isLeader: true, leaderId: 'a', revision: 5, dbSize: 100, dbSizeInUse: 50 }],
  supportsLearners: true, replaceAfterMs: 60_000, replaceOnNodeLossAfterMs: 30_000, strandedForMs: {}, silentForMs: {}, stoppingForMs: {}, stuckStoppingAfterMs: 300_000, stalledForMs: {}, stalledAfterMs: 600_000,
  unclaimedForMs: {}, claimGraceMs: 600_000, learnerMaxLag: 10, targetVersion: '3.5.17', targetConfig: '', targetTemplate: '', targetMetadata: '', alarms: [], quotaBackendBytes: 2 ** 31,
};
const statusOf = (c: EtcdCluster): EtcdCluster['status'] => clusterStatus(c, state, { type: 'Steady' }, new Map(), '2026-11-22T00:00:00Z');
const unused = (s: EtcdCluster['status']) => s?.conditions?.find((c) => c.type === 'UnusedFields');

test('a CoreOS field that does nothing here is said to, once, by name and value, and why (issue 32, finding 14)', () => {
  const spec: ClusterSpec = { size: 1, pod: { busyboxImage: 'registry.local/busybox:missing' } };
  const first = statusOf(cluster(spec));
  const condition = unused(first);
  assert.equal(condition?.status, 'True');
  assert.equal(condition.reason, 'CoreOSFieldsUnused');
  assert.match(condition.message ?? '', /^spec\.pod\.busyboxImage \(registry\.local\/busybox:missing\): accepted for compatibility with CoreOS manifests, and not used\. /);
  assert.match(condition.message ?? '', /no busybox image is pulled\. The condition goes once the spec no longer sets it$/);
  assert.deepEqual(conditionEvents({ bootstrapped: true }, first), [{ type: 'Normal', reason: 'CoreOSFieldsUnused', message: condition.message }]);
  assert.deepEqual(conditionEvents(first, statusOf(cluster(spec, first))), [], 'told once, not on every pass');

  const both = unused(statusOf(cluster({ size: 1, pod: { busyboxImage: 'busybox:1.28.0-glibc', DNSTimeoutInSecond: 0 } })));
  assert.match(both?.message ?? '', /^spec\.pod\.busyboxImage \(busybox:1\.28\.0-glibc\) and spec\.pod\.DNSTimeoutInSecond \(0\): .* sets them$/);
  assert.equal(unused(statusOf(cluster({ size: 1, pod: {} }))), undefined, 'no such field, no condition: other clusters\' status is as it was');
  assert.equal(unused(statusOf(cluster({ size: 1 }, first))), undefined, 'removed from the spec, the condition goes');
});

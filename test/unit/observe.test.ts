import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { alarmsInStatuses, observeEtcd } from '../../src/controllers/cluster/observe.js';
import type { EtcdClient, EtcdStatus } from '../../src/etcd/client.js';

const status = (errors: string[]): EtcdStatus => ({
  memberId: '1', leaderId: '1', raftIndex: 9, raftTerm: 2, revision: 5, dbSize: 1, dbSizeInUse: 1, version: '3.5.17', isLearner: false, errors, storageVersion: '', downgradeTarget: '',
});

test('the alarms etcd names in its members\' statuses are read as the alarm list reads them', () => {
  assert.deepEqual(alarmsInStatuses([
    status(['memberID:10276657743932975437 alarm:NOSPACE ', 'etcdserver: no leader']),
    status(['memberID:10276657743932975437 alarm:NOSPACE ', 'alarm:CORRUPT ']),
  ]), [{ memberId: '10276657743932975437', alarm: 'NOSPACE' }, { memberId: '0', alarm: 'CORRUPT' }]);
  assert.deepEqual(alarmsInStatuses([status(['etcdserver: no leader'])]), []);
});

test('an alarm list that fails is not read as no alarm: the members\' own records stand in for it', async () => {
  const pod: V1Pod = { metadata: { name: 'full-1' }, status: { podIP: '10.0.0.1', conditions: [{ type: 'Ready', status: 'True' }] } };
  const etcd = {
    memberList: () => Promise.resolve([{ id: '1', name: 'full-1', peerURLs: [], clientURLs: [], isLearner: false }]),
    status: () => Promise.resolve(status(['memberID:1 alarm:NOSPACE '])),
    alarmList: () => Promise.reject(new Error('context deadline exceeded')),
  } as unknown as EtcdClient;
  const seen = await observeEtcd(etcd, { cluster: 'full', namespace: 'ns', domain: 'cluster.local', tls: false }, [pod]);
  assert.deepEqual(seen.alarms, [{ memberId: '1', alarm: 'NOSPACE' }]);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { clientsHeld } from '../../src/controllers/restore/clients-held.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { EtcdRestore } from '../../src/api/etcd-backup.js';
import { ANNOTATION_RESTORED_BY, ANNOTATION_RESTORED_BY_UID } from '../../src/k8s/labels.js';

const cluster = (uid?: string): EtcdCluster => ({
  apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdCluster',
  metadata: { name: 'c', namespace: 'ns', annotations: { [ANNOTATION_RESTORED_BY]: 'r', ...(uid ? { [ANNOTATION_RESTORED_BY_UID]: uid } : {}) } },
  spec: { size: 1 },
});
const restore = (status: EtcdRestore['status'], pointInTime = true): EtcdRestore => ({
  apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdRestore',
  metadata: { name: 'r', namespace: 'ns', uid: 'u1' },
  spec: { etcdCluster: { name: 'c' }, backupStorageType: 'S3', ...(pointInTime ? { pointInTime: { revision: 50 } } : {}) },
  ...(status ? { status } : {}),
});

test('a point-in-time restore keeps its cluster\'s clients away until its change log is replayed to the point', () => {
  assert.equal(clientsHeld(cluster('u1'), restore(undefined)), true, 'nothing chosen yet');
  assert.equal(clientsHeld(cluster('u1'), restore({ phase: 'Restoring', pointInTime: { revision: 50, replayedThrough: 49 } })), true, 'one revision short');
  assert.equal(clientsHeld(cluster('u1'), restore({ phase: 'Failed', pointInTime: { revision: 50, replayedThrough: 30 } })), true, 'failed short of the point');
  assert.equal(clientsHeld(cluster('u1'), restore({ phase: 'Restoring', pointInTime: { revision: 50, replayedThrough: 50 } })), false, 'at the point');
  assert.equal(clientsHeld(cluster('u1'), restore({ phase: 'Completed' })), false);
});

test('a restore from a snapshot alone, a restore that did not make the cluster, or none at all hold nothing', () => {
  assert.equal(clientsHeld(cluster('u1'), restore({ phase: 'Restoring' }, false)), false);
  assert.equal(clientsHeld(cluster('other'), restore({ phase: 'Restoring' })), false);
  assert.equal(clientsHeld(cluster('u1'), undefined), false);
});

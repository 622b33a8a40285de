import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { EtcdBackup } from '../../src/api/etcd-backup.js';
import { clusterDetail, clustersTable, lastBackup } from '../../src/cli/status-view.js';
import { age, bytes, table } from '../../src/cli/table.js';
import { progress } from '../../src/cli/progress.js';

const now = Date.parse('2026-11-23T12:00:00Z');
const cluster: EtcdCluster = {
  apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdCluster',
  metadata: { name: 'example', namespace: 'default', creationTimestamp: '2026-11-23T11:00:00Z' },
  spec: { size: 3, version: '3.5.17' },
  status: {
    phase: 'Running', readyMembers: 3, currentVersion: '3.5.17', targetVersion: '3.5.17', leader: 'example-aa', serviceName: 'example-client', clientPort: 2379,
    members: { ready: ['example-aa', 'example-bb'], unready: ['example-cc'] },
    conditions: [{ type: 'Available', status: 'True', reason: 'QuorumReady', message: '3 of 3 members ready' }],
    memberStatus: [{ name: 'example-aa', isLeader: true, version: '3.5.17', raftIndex: 120, dbSize: 2_097_152, dbSizeInUse: 1_048_576 }, { name: 'example-cc', isLearner: true }],
  },
};
const backup = (name: string, when: string, clusterName = 'example'): EtcdBackup => ({
  apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdBackup', metadata: { name, namespace: 'default' },
  spec: { clusterName, storageType: 'S3' }, status: { succeeded: true, etcdRevision: 42, lastSuccessDate: when, lastBackup: { path: 'b/k', size: 1536, sha256: 'x' } },
});

test('table, bytes and age format as kubectl would', () => {
  assert.equal(table(['A', 'LONG'], [['xyz', '1'], ['', '22']]), 'A    LONG\nxyz  1\n     22');
  assert.deepEqual([bytes(undefined), bytes(512), bytes(1536), bytes(3 * 1024 ** 3)], ['', '512 B', '1.5 KiB', '3.0 GiB']);
  assert.deepEqual([age('2026-11-23T11:59:30Z', now), age('2026-11-23T11:00:00Z', now), age('2026-11-20T12:00:00Z', now)], ['30s', '60m', '3d']);
});

test('the last backup is the newest success naming the cluster', () => {
  const backups = [backup('old', '2026-11-23T10:00:00Z'), backup('new', '2026-11-23T11:30:00Z'), backup('other', '2026-11-23T11:59:00Z', 'another')];
  assert.equal(lastBackup(cluster, backups)?.metadata.name, 'new');
  assert.equal(lastBackup(cluster, []), undefined);
});

test('status without a name: a line per cluster with readiness, leader and last backup', () => {
  const lines = clustersTable([cluster], [backup('nightly', '2026-11-23T11:30:00Z')], now).split('\n');
  assert.match(lines[0] ?? '', /^NAMESPACE\s+NAME\s+SIZE\s+READY\s+VERSION\s+PHASE\s+LEADER\s+LAST BACKUP\s+AGE$/);
  assert.match(lines[1] ?? '', /^default\s+example\s+3\s+3\/3\s+3\.5\.17\s+Running\s+example-aa\s+nightly, rev 42, 30m ago\s+60m$/);
  assert.equal(clustersTable([], [], now), 'No EtcdClusters found.');
});

test('status of one cluster: conditions, member roles and sizes, the client address', () => {
  const text = clusterDetail({ ...cluster, status: { ...cluster.status, targetVersion: '3.5.35' } }, [], now);
  assert.match(text, /^EtcdCluster default\/example: Running, 3\/3 ready, version 3\.5\.17 → 3\.5\.35$/m);
  assert.match(text, /^Client: example-client\.default\.svc:2379$/m);
  assert.match(text, /^Available\s+True\s+QuorumReady\s+3 of 3 members ready$/m);
  assert.match(text, /^example-aa\s+leader\s+yes\s+3\.5\.17\s+120\s+2\.0 MiB\s+1\.0 MiB$/m);
  assert.match(text, /^example-cc\s+learner\s+no$/m);
  assert.match(text, /^Last backup: none$/m);
});

test('status of one cluster: its continuous backup\'s log and gaps, and what verification proved or why it failed', () => {
  const continuous: EtcdBackup = {
    ...backup('pitr', '2026-11-23T11:00:00Z'),
    spec: { clusterName: 'example', storageType: 'S3', continuous: {} },
  };
  continuous.status = {
    ...continuous.status, changeLog: { throughRevision: 9000, confirmedAt: '2026-11-23T11:59:57Z', gaps: [{ from: 10, to: 20 }] },
    verification: { lastVerifiedRevision: 8000, lastVerifiedAt: '2026-11-23T11:00:00Z', restoreSeconds: 12 },
    conditions: [{ type: 'Verified', status: 'False', reason: 'DataDiffers', message: 'at revision 8500 the restored HashKV is 1, the live cluster\'s 2' }],
  };
  const text = clusterDetail(cluster, [continuous], now);
  assert.match(text, /^Change log \(pitr\): every revision through 9000, confirmed 3s ago; gaps: 10-20$/m);
  assert.match(text, /^Verified \(pitr\): revision 8000, 60m ago, restored in 12 s$/m);
  assert.match(text, /^Verification \(pitr\): DataDiffers: at revision 8500 the restored HashKV is 1, the live cluster's 2$/m);
});

test('progress off a terminal: a plain line per step and per change of state, none for a repeat', () => {
  let out = '';
  let clock = 0;
  const p = progress({ write: (s: string) => { out += s; return true; } } as unknown as NodeJS.WritableStream, () => clock);
  p.step('lab');
  clock = 1500;
  p.update('building');
  p.update('building');
  p.step('cluster');
  clock = 4000;
  p.fail('not Available');
  assert.equal(out, '[0.0s] lab\n[1.5s] lab: building\n[1.5s] lab: done\n[0.0s] cluster\n[2.5s] cluster: not Available\n');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { retentionRemovals } from '../../src/controllers/backup/save.js';
import { snapshotsInUse } from '../../src/controllers/backup/reconciler.js';
import type { EtcdRestore } from '../../src/api/etcd-backup.js';

const names = ['b_v100_2026-11-29-10:00:00', 'b_v200_2026-11-29-10:10:00', 'b_v200_2026-11-29-10:10:00.held', 'b_v300_2026-11-29-10:20:00', 'b_v400_2026-11-29-10:30:00'];
const now = Date.parse('2026-11-29T10:31:00Z');

test('retention removes each expired backup with its .held object, but not one a restore under way starts from', () => {
  assert.deepEqual(retentionRemovals(names, 'b', { maxBackups: 2, tiers: [] }, now), ['b_v100_2026-11-29-10:00:00', 'b_v200_2026-11-29-10:10:00', 'b_v200_2026-11-29-10:10:00.held']);
  // A user's trial: retention removed the snapshot (and so the change log after it) a replay was reading.
  assert.deepEqual(retentionRemovals(names, 'b', { maxBackups: 2, tiers: [] }, now, new Set(['b_v200_2026-11-29-10:10:00'])), ['b_v100_2026-11-29-10:00:00']);
});

test('the snapshots in use are those point-in-time restores of the same path under way chose', () => {
  const restore = (path: string, phase: string | undefined, snapshot?: string): EtcdRestore => ({
    apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdRestore', metadata: { name: `${path}-${String(phase)}`, namespace: 'ns' },
    spec: { etcdCluster: { name: 'c' }, backupStorageType: 'S3', s3: { path, awsSecret: 'aws' } },
    ...(phase ? { status: { phase, ...(snapshot ? { pointInTime: { snapshot } } : {}) } } : {}),
  });
  const restores = [
    restore('bucket/b', 'Restoring', 'b_v200_2026-11-29-10:10:00'),
    restore('bucket/b', 'Completed', 'b_v300_2026-11-29-10:20:00'),
    restore('bucket/b', 'Failed', 'b_v400_2026-11-29-10:30:00'),
    restore('bucket/other', 'Restoring', 'b_v100_2026-11-29-10:00:00'),
    restore('bucket/b', undefined),
  ];
  assert.deepEqual([...snapshotsInUse(restores, 'bucket/b')], ['b_v200_2026-11-29-10:10:00']);
  assert.deepEqual([...snapshotsInUse(restores, undefined)], [], 'a Volume backup has no S3 path');
});

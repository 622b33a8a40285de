import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { S3Location } from '../../src/api/etcd-backup.js';
import { getRestore, neverServed, restoreToEnd, takeBackup } from '../support/backup-bed.js';
import { eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { loggedAt, startOperator } from '../support/operator-process.js';
import type { LogEntry } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import { TIDY_STEP } from '../../src/k8s/member-pod.js';

const running = (bed: Testbed, name: string) => async (): Promise<true | undefined> => {
  const c = await bed.get(name).catch(() => undefined);
  const pods = await bed.pods(name);
  return c?.status?.phase === 'Running' && pods.length === 3 && pods.every(isReady) ? true : undefined;
};


test('EtcdRestore: a new 3-member cluster from an S3 backup holds exactly its 10,000 keys; a corrupt or tampered backup (refused by the members as they fetch it, before etcd starts) and an existing cluster are refused', async (t) => {
  const bed = await testbed(t, 'restore');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace);
  const s3 = (path: string): S3Location => ({ path, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true });

  await bed.create('source', { size: 3 });
  await eventually('the source cluster Running', 120_000, running(bed, 'source'));
  const source = await bed.clientEndpoint('source');
  const keys = Array.from({ length: 10_000 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('10,000 keys written', 60_000, async () => { await etcdPutMany(source, keys); return true; });
  await takeBackup(bed, 'snap', { clusterName: 'source', storageType: 'S3', s3: s3('backups/source.db') });
  // Changes after the backup must not appear in the restored cluster.
  await etcdPutMany(source, [['key-0', 'changed'], ['after-backup', 'x']]);

  const started = Date.now();
  // One member per node from the start: members that shared a node would be spread (a member added, one removed).
  const done = await restoreToEnd(bed, 'again', { etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3: s3('backups/source.db'), clusterSpec: { size: 3, pod: { antiAffinity: true } } });
  assert.equal(done.status?.phase, 'Completed', JSON.stringify(done.status));
  await eventually('the restored cluster Running', 60_000, running(bed, 'restored'));
  t.diagnostic(`restored 3 members from the snapshot in ${Date.now() - started} ms`);
  const restored = await bed.clientEndpoint('restored');
  const held = await eventually('restored keys readable', 30_000, () => etcdGetPrefix(restored, 'key-'));
  assert.equal(held.size, 10_000, 'exactly the 10,000 keys');
  for (const [k, v] of keys) assert.equal(held.get(k), v, k);
  assert.equal((await etcdGetPrefix(restored, 'after-backup')).size, 0, 'nothing written after the backup');
  // The members that restored the data keep their pods (their steps run again harmlessly: restore-reboot): the
  // operator replaced, restarted or added none of the restored cluster's members, from its creation on.
  const moved = (e: LogEntry): boolean => e.key === `${bed.namespace}/restored` && ['RemoveMember', 'AddMember', 'DeletePod', 'CreatePod'].includes(e.action?.type ?? '');
  assert.deepEqual(loggedAt(operator.logs, 'acting', moved), [], 'no member moved after the restore');
  const pods = await bed.pods('restored');
  assert.ok(pods.every((p) => p.spec?.initContainers?.some((c) => c.name === TIDY_STEP)), 'on the pods that restored the data');
  assert.equal((await eventually('keys readable later on', 30_000, () => etcdGetPrefix(restored, 'key-'))).size, 10_000);

  // A backup whose bytes no longer match the sha256 beside it, so short (under etcdChecked's 32-byte hold-back)
  // that the operator's first block is all of it: refused before a cluster is made.
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'bad.db', Body: 'not a snapshot' }));
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'bad.db.sha256', Body: `${'0'.repeat(64)}\n` }));
  const corrupt = await restoreToEnd(bed, 'corrupt', { etcdCluster: { name: 'never' }, backupStorageType: 'S3', s3: s3('backups/bad.db') }, 60_000);
  assert.equal(corrupt.status?.phase, 'Failed');
  assert.equal(corrupt.status.reason, 'ChecksumMismatch');
  assert.match(corrupt.status.conditions?.[0]?.message ?? '', /does not match the stored 0{64}/);
  assert.equal(await bed.get('never').then(() => 'exists', () => 'absent'), 'absent', 'no cluster made from it');

  // One pass: the operator opens a backup and reads its first block only; each member's fetch step reads it whole,
  // checking every byte as it streams to disk, and refuses it before etcd ever starts on it. A byte changed in the
  // middle after the backup was stored: the sha256 beside it no longer matches.
  const good = Buffer.from(await (await minio.client.send(new GetObjectCommand({ Bucket: 'backups', Key: 'source.db' }))).Body?.transformToByteArray() ?? []);
  const flipped = (at: number): Buffer => {
    const copy = Buffer.from(good);
    copy[at] = (copy[at] ?? 0) ^ 0x01;
    return copy;
  };
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'tampered.db', Body: flipped(Math.floor(good.length / 2)) }));
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'tampered.db.sha256', Body: `${createHash('sha256').update(good).digest('hex')}\n` }));
  const caught = await restoreToEnd(bed, 'tampered', { etcdCluster: { name: 'never-tampered' }, backupStorageType: 'S3', s3: s3('backups/tampered.db') }, 120_000);
  assert.deepEqual([caught.status?.phase, caught.status?.reason], ['Failed', 'ChecksumMismatch'], JSON.stringify(caught.status));
  assert.match(caught.status?.conditions?.[0]?.message ?? '', /member never-tampered-\w+ refused the backup: tampered\.db: sha256 [0-9a-f]{64} does not match the stored [0-9a-f]{64}/);
  await neverServed(bed, 'never-tampered');
  // The cluster it made says so too, not only the restore: it never starts, and waits for a person to delete it.
  const told = await eventually('the cluster made from it says the backup was refused', 60_000, async () =>
    (await bed.get('never-tampered')).status?.conditions?.find((c) => c.type === 'Degraded' && c.reason === 'BackupRefused'));
  assert.match(told.message ?? '', /refused the backup it restores from \(ChecksumMismatch: .*delete it, and restore from another backup/);

  // A snapshot that etcd itself would reject (damaged before it was stored: etcd's own sha256 at its end no longer
  // matches) with a sha256 beside it that vouches for those bytes: refused with the cause, etcd never started on it
  // (etcdutl used to fail on it, then on its own leftovers, for ever).
  const damaged = flipped(Math.floor(good.length / 3));
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'damaged.db', Body: damaged }));
  await minio.client.send(new PutObjectCommand({ Bucket: 'backups', Key: 'damaged.db.sha256', Body: `${createHash('sha256').update(damaged).digest('hex')}\n` }));
  const rejected = await restoreToEnd(bed, 'damaged', { etcdCluster: { name: 'never-damaged' }, backupStorageType: 'S3', s3: s3('backups/damaged.db') }, 120_000);
  assert.deepEqual([rejected.status?.phase, rejected.status?.reason], ['Failed', 'SnapshotRejected'], JSON.stringify(rejected.status));
  assert.match(rejected.status?.conditions?.[0]?.message ?? '', /etcd's own sha256 .* does not match its content/);
  await neverServed(bed, 'never-damaged');

  const refused = await restoreToEnd(bed, 'over', { etcdCluster: { name: 'source' }, backupStorageType: 'S3', s3: s3('backups/source.db') }, 60_000);
  assert.equal(refused.status?.reason, 'ClusterExists');
  assert.equal((await etcdGetPrefix(source, 'after-backup')).size, 1, 'the existing cluster untouched');

  // The name of a finished restore used again (its EtcdRestore deleted, the cluster it made kept): the new
  // restore did not make that cluster, so it is refused rather than Completed without restoring anything.
  await bed.transport.call('DELETE', `/apis/${GROUP}/${VERSION}/namespaces/${bed.namespace}/etcdrestores/again`);
  await eventually('the first restore gone', 30_000, async () => ((await getRestore(bed, 'again')) ? undefined : true));
  const reused = await restoreToEnd(bed, 'again', { etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3: s3('backups/source.db') }, 60_000);
  assert.deepEqual([reused.status?.phase, reused.status?.reason], ['Failed', 'ClusterExists'], JSON.stringify(reused.status));
  operator.succeeded();
});

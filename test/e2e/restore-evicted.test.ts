// suite: extended — a restore's member evicted before its etcd ran (seen once in a bench run): restore and disaster-recovery hold restores in the gate.
// A restore's member evicted by its kubelet while it fetched the snapshot (seen in a bench run, its node low
// on disk): the pod is Failed for good, its etcd never ran, nothing was acknowledged. The restore must make
// it again once the cause is gone, not wait for ever as "bootstrapping: 0 of 1 members started". The
// eviction here is the kubelet's own: the member pod's ephemeral-storage limit, which the download into its
// data directory passes while the store stalls it midway.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { CopyObjectCommand } from '@aws-sdk/client-s3';
import { eventually } from '../support/lab.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { backupBed, createRestore, restoreEnded, takeBackup } from '../support/backup-bed.js';
import { storeRelay } from '../support/store-relay.js';

const MIB = 1024 * 1024;

test('a restore whose member was evicted before its etcd ran makes it again and completes, once the cause is gone', async (t) => {
  const { bed, minio, operator } = await backupBed(t, 'restore-evicted');
  const relay = await storeRelay(t, minio.endpoint);
  const endpoint = await bed.clientEndpoint('src');
  const backup = (name: string): Promise<unknown> =>
    takeBackup(bed, name, { clusterName: 'src', storageType: 'S3', s3: { path: `backups/${name}.db`, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true } });
  await eventually('a key in the source', 60_000, async () => { await etcdPutMany(endpoint, [['small', 'yes']]); return true; });
  await backup('small');
  // A download that passes the member's 150 MiB limit long before its end:
  // 200 MiB of incompressible values, one 1 MiB value per request (etcd's limit is 1.5 MiB).
  for (let i = 0; i < 200; i += 10) {
    await Promise.all(Array.from({ length: 10 }, (_, j) => etcdPutMany(endpoint, [[`big-${i + j}`, randomBytes(768 * 1024).toString('base64')]], { timeoutMs: 30_000 })));
  }
  await backup('target');

  // The operator's check of the backup reads it whole; every later download (the member's) stalls at 180 MiB.
  let downloads = 0;
  relay.stallAfter((method, path) => method === 'GET' && path.startsWith('/backups/target.db') && !path.includes('.sha256') && ++downloads > 1, 180 * MIB);
  await createRestore(bed, 'again', {
    etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3: { path: 'backups/target.db', awsSecret: 'aws', endpoint: relay.endpoint, forcePathStyle: true },
    // Room for a member's data (etcd preallocates 64 MiB of WAL, and the next 64 MiB segment), not for this
    // snapshot beside it. (The restored member is replaced right after the restore: its replacement must fit too.)
    clusterSpec: { size: 1, pod: { resources: { limits: { 'ephemeral-storage': '150Mi' } } } },
  });
  const evicted = await eventually('the member pod evicted by its kubelet', 240_000, async () => {
    const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
    return events.find((e) => e.reason === 'Evicted' && e.involvedObject.name?.startsWith('restored-'));
  });
  t.diagnostic(`evicted: ${evicted.message ?? ''}`);

  // The cause goes: the store answers again, and the backup at that path is one the member's limit holds.
  await minio.client.send(new CopyObjectCommand({ Bucket: 'backups', Key: 'target.db.sha256', CopySource: 'backups/small.db.sha256' }));
  await minio.client.send(new CopyObjectCommand({ Bucket: 'backups', Key: 'target.db', CopySource: 'backups/small.db' }));
  relay.heal();
  const done = await eventually('the restore ended', 240_000, () => restoreEnded(bed, 'again'));
  assert.equal(done.status?.phase, 'Completed', JSON.stringify(done.status));
  const restored = await bed.clientEndpoint('restored');
  const held = await eventually('the restored key readable', 60_000, async () => {
    const kvs = await etcdGetPrefix(restored, 'small');
    return kvs.size === 1 ? kvs : undefined;
  });
  assert.equal(held.get('small'), 'yes');
  assert.ok(operator.logs.some((l) => l.includes('its pod failed before its etcd ever ran')), 'the failed pod was made again by the bootstrap rule');
  assert.ok(relay.stalled.length >= 1, `the member's download stalled: ${JSON.stringify(relay.stalled)}`);
  operator.succeeded();
});

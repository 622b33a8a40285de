// A restore's verdict rests on a fresh observation: an EtcdRestore whose cluster the operator's cache has not
// seen yet (its watch of EtcdClusters lagging behind the API server) must not be failed as "cluster deleted".
// Failed is final: the cluster it made would run on, never replayed or reported.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { S3Location } from '../../src/api/etcd-backup.js';
import { createRestore, restoreEnded, takeBackup } from '../support/backup-bed.js';
import { apiRelay, watches } from '../support/api-relay.js';
import { eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';

test('a restore whose new cluster the operator\'s cache has not seen yet waits for it, and completes once the watch catches up', async (t) => {
  const bed = await testbed(t, 'restore-lag');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const relay = await apiRelay(t);
  const operator = startOperator(t, bed.namespace, [], relay.url);
  const s3: S3Location = { path: 'backups/src.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };

  await bed.create('src', { size: 1 });
  await eventually('the source ready', 120_000, async () => {
    const pods = await bed.pods('src');
    return (await bed.get('src')).status?.phase === 'Running' && pods.length === 1 && pods.every(isReady) ? true : undefined;
  });
  const endpoint = await bed.clientEndpoint('src');
  await eventually('keys written', 60_000, async () => { await etcdPutMany(endpoint, [['k-a', '1'], ['k-b', '2']]); return true; });
  await takeBackup(bed, 'snap', { clusterName: 'src', storageType: 'S3', s3 });

  // From here the operator hears nothing of EtcdClusters: the one its restore makes stays out of its cache.
  relay.stall(watches('etcdclusters'));
  await createRestore(bed, 'lagging', { etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3, clusterSpec: { size: 1 } });
  await eventually('the restored cluster created', 60_000, async () => ((await bed.get('restored').catch(() => undefined)) ? true : undefined));
  // Several of the restore's 2 s passes, each with the cluster missing from the cache.
  await new Promise((r) => setTimeout(r, 6000));
  assert.equal(await restoreEnded(bed, 'lagging'), undefined, 'the restore has not ended while its cluster exists');

  relay.heal();
  const done = await eventually('the restore ended', 180_000, () => restoreEnded(bed, 'lagging'));
  assert.equal(done.status?.phase, 'Completed', JSON.stringify(done.status));
  const restored = await bed.clientEndpoint('restored');
  const held = await eventually('restored keys readable', 30_000, () => etcdGetPrefix(restored, 'k-'));
  assert.deepEqual([...held.entries()].sort(), [['k-a', '1'], ['k-b', '2']]);
  operator.succeeded();
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import { takeBackup } from '../support/backup-bed.js';


const running = (bed: Testbed, name: string) => async (): Promise<EtcdCluster | undefined> => {
  const c = await bed.get(name);
  const pods = await bed.pods(name);
  return c.status?.phase === 'Running' && c.status.readyMembers === 3 && pods.length === 3 && pods.every(isReady) ? c : undefined;
};


/** Two of three members killed together; their emptyDir data goes with them. */
async function killMajority(bed: Testbed, cluster: string): Promise<string> {
  const [a, b, survivor] = (await bed.pods(cluster)).map((p) => p.metadata?.name ?? '');
  await Promise.all([a, b].map((name) => bed.core.deleteNamespacedPod({ name: name ?? '', namespace: bed.namespace, gracePeriodSeconds: 0 })));
  return survivor ?? '';
}

test('a majority lost with its data: rebuilt from the latest backup with the restore policy, on S3 or on a volume; without it, or with a backup older than the policy allows, Failed, nothing deleted', async (t) => {
  const bed = await testbed(t, 'dr');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace);

  await bed.create('guarded', { size: 3, restorePolicy: { fromLatestBackup: 'nightly' } });
  await bed.create('unguarded', { size: 3 });
  // Issue 16, item 8: a policy naming a backup kept on a volume (before, the rebuild started and then waited for
  // ever for an S3 object).
  await bed.core.createNamespacedPersistentVolumeClaim({ namespace: bed.namespace, body: {
    metadata: { name: 'backups' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  } });
  await bed.create('onvolume', { size: 3, restorePolicy: { fromLatestBackup: 'volume-nightly' } });
  // A policy that accepts a backup at most a minute old (the least it allows), and a backup older than that
  // when the majority is lost.
  await bed.create('stale', { size: 3, restorePolicy: { fromLatestBackup: 'stale-nightly', maxBackupAgeSeconds: 60 } });
  await eventually('the clusters Running', 120_000, async () => (await running(bed, 'guarded')()) && (await running(bed, 'stale')())
    && (await running(bed, 'onvolume')()) && running(bed, 'unguarded')());
  const endpoint = await bed.clientEndpoint('guarded');
  const keys = Array.from({ length: 1000 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('1,000 keys written', 60_000, async () => { await etcdPutMany(endpoint, keys); return true; });
  const backUp = async (name: string, cluster: string, onVolume = false): Promise<void> => {
    await takeBackup(bed, name, onVolume
      ? { clusterName: cluster, storageType: 'Volume', volume: { claimName: 'backups', path: `${cluster}/${name}.db` } }
      : { clusterName: cluster, storageType: 'S3', s3: { path: `backups/${cluster}/${name}`, awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true } }, 60_000);
  };
  await backUp('stale-nightly', 'stale');
  const staleSince = Date.now();
  await backUp('nightly', 'guarded');
  await etcdPutMany(endpoint, [['after-backup', 'lost']]);
  await eventually('1,000 keys written to the cluster backed up on a volume', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('onvolume'), keys); return true; });
  await backUp('volume-nightly', 'onvolume', true);

  const started = Date.now();
  await killMajority(bed, 'guarded');
  const rebuilt = await eventually('rebuilt from the backup', 180_000, async () => {
    const c = await running(bed, 'guarded')();
    return c?.status?.rebuild?.completedAt ? c : undefined;
  });
  t.diagnostic(`rebuilt from backup ${Date.now() - started} ms after losing the majority: ${JSON.stringify(rebuilt.status?.rebuild)}`);
  const held = await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('guarded'), 'key-'));
  assert.equal(held.size, 1000, 'every key of the backup');
  assert.equal((await etcdGetPrefix(await bed.clientEndpoint('guarded'), 'after-backup')).size, 0, 'the write after the backup is lost, as reported');
  assert.ok((rebuilt.status?.rebuild?.lostRevisions ?? 0) >= 1, 'the loss is reported');
  // Recorded just after the status that completes the rebuild.
  await eventually('an event that says which revision', 30_000, async () => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .find((e) => e.involvedObject.name === 'guarded' && e.reason === 'RestoredFromBackup' && e.type === 'Warning' && /revision \d+/.test(e.message ?? '')));

  await killMajority(bed, 'onvolume');
  const fromVolume = await eventually('rebuilt from the volume backup', 180_000, async () => {
    const c = await running(bed, 'onvolume')();
    return c?.status?.rebuild?.completedAt ? c : undefined;
  });
  assert.equal(fromVolume.status?.rebuild?.backup, 'volume-nightly');
  const heldOnVolume = await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('onvolume'), 'key-'));
  assert.equal(heldOnVolume.size, 1000, 'every key of the volume backup');

  // Without a policy, and with a policy whose backup is too old: nothing is rebuilt, the survivor stays.
  for (const [cluster, why] of [['unguarded', /majority is lost/], ['stale', /EtcdBackup stale-nightly is \d+ s old, older than the 60 s restorePolicy.maxBackupAgeSeconds allows/]] as const) {
    if (cluster === 'stale') await new Promise((r) => setTimeout(r, Math.max(0, staleSince + 65_000 - Date.now())));
    const survivor = await killMajority(bed, cluster);
    const failed = await eventually(`${cluster}: Failed with a clear condition`, 120_000, async () => {
      const c = await bed.get(cluster);
      return c.status?.phase === 'Failed' ? c : undefined;
    });
    const degraded = failed.status?.conditions?.find((c) => c.type === 'Degraded');
    assert.ok(degraded);
    assert.equal(degraded.reason, 'QuorumLost');
    assert.match(degraded.message ?? '', /majority is lost/);
    assert.match(degraded.message ?? '', why);
    await new Promise((r) => setTimeout(r, 3000));
    assert.deepEqual((await bed.pods(cluster)).map((p) => p.metadata?.name), [survivor], `${cluster}: the survivor is not deleted`);
    assert.equal((await bed.get(cluster)).status?.rebuild, undefined, `${cluster}: no rebuild started`);
  }
  operator.succeeded();
});

import { test } from 'node:test';
import { RESTORE_STEP } from '../../src/k8s/member-pod.js';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, isReady, membersOnEveryNode, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { restoreToEnd, takeBackup } from '../support/backup-bed.js';


// Issue 16, item 7: the backup's claim (ReadWriteOnce, node-local on the lab) can be mounted on one node only,
// so a restore whose three founders all mounted it could never place members on three nodes.
test('backup to a volume (a pod with the claim mounted) and a restore from it into a new 3-member cluster, one member per node', async (t) => {
  const bed = await testbed(t, 'volbackup');
  await bed.core.createNamespacedPersistentVolumeClaim({ namespace: bed.namespace, body: {
    metadata: { name: 'backups' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  } });
  const operator = startOperator(t, bed.namespace);

  await bed.create('vsrc', { size: 1 });
  await eventually('the source Running', 120_000, async () => {
    const pods = await bed.pods('vsrc');
    return (await bed.get('vsrc')).status?.phase === 'Running' && pods.length === 1 && pods.every(isReady) ? true : undefined;
  });
  const keys = Array.from({ length: 500 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('500 keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('vsrc'), keys); return true; });

  const volume = { claimName: 'backups', path: 'vsrc/snap.db' };
  const backup = await takeBackup(bed, 'vol', { clusterName: 'vsrc', storageType: 'Volume', volume });
  assert.equal(backup.status?.lastBackup?.path, 'vsrc/snap.db');
  assert.match(backup.status.lastBackup.sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.ok((backup.status.lastBackup.size ?? 0) > 500 * 16);
  await eventually('the snapshot pod cleaned up', 60_000, async () =>
    ((await bed.core.listNamespacedPod({ namespace: bed.namespace, labelSelector: 'etcd_backup=vol' })).items.length === 0 ? true : undefined));

  const restored = await restoreToEnd(bed, 'back', {
    etcdCluster: { name: 'vrestored' }, backupStorageType: 'Volume', volume, clusterSpec: { size: 3, pod: { ...ON_VOLUMES, antiAffinity: true } },
  });
  assert.equal(restored.status?.phase, 'Completed', JSON.stringify(restored.status));
  const founder = (await bed.pods('vrestored')).find((p) => p.spec?.initContainers?.some((c) => c.name === RESTORE_STEP));
  assert.ok(founder, 'one founder restored the data; the others joined it');
  const held = await eventually('restored keys readable', 60_000, async () => etcdGetPrefix(await bed.clientEndpoint('vrestored'), 'key-'));
  assert.equal(held.size, 500);
  assert.equal(held.get('key-499'), 'value-499');
  // The founder keeps the pod that restored it; the two that joined it spread over the other nodes.
  await eventually('3 members, one per node', 240_000, () => membersOnEveryNode(bed, 'vrestored', 3));
  const kept = (await bed.pods('vrestored')).find((p) => p.metadata?.uid === founder.metadata?.uid);
  assert.ok(kept?.spec?.initContainers?.some((c) => c.name === RESTORE_STEP), 'the founder on the pod that restored it');
  const after = await eventually('restored keys readable on three members', 60_000, async () => etcdGetPrefix(await bed.clientEndpoint('vrestored'), 'key-'));
  assert.equal(after.size, 500);
  operator.succeeded();
});

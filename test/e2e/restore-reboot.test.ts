// lab: exclusive — a node is rebooted.
// Issue 16, item 6: a restored cluster's members must survive a node reboot, which runs a pod's init containers
// again: a member that still carried its restore steps would fetch the snapshot again and fail on its own data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RESTORE_STEP } from '../../src/k8s/member-pod.js';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, isReady, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import { restoreToEnd, takeBackup } from '../support/backup-bed.js';
import { rebootNode } from '../support/faults.js';
import { memberIds } from '../support/chaos.js';

test('a cluster restored onto volumes drops its restore steps, and its members come back from a node reboot with their data', async (t) => {
  const bed = await testbed(t, 'rreboot');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace);
  const s3 = { path: 'backups/source.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };

  await bed.create('source', { size: 1 });
  await eventually('the source Running', 120_000, () => bed.settledMembers('source', 1));
  const keys = Array.from({ length: 1000 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('1,000 keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('source'), keys); return true; });
  await takeBackup(bed, 'snap', { clusterName: 'source', storageType: 'S3', s3 });
  const restore = await restoreToEnd(bed, 'back', { etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3, clusterSpec: { size: 3, pod: ON_VOLUMES } });
  assert.equal(restore.status?.phase, 'Completed', JSON.stringify(restore.status));

  // Every member rolls, one at a time and in place on its volume, onto a pod without the restore steps.
  const rolled = await eventually('no member carrying restore steps', 240_000, async () => {
    const pods = await bed.pods('restored');
    const plain = pods.length === 3 && pods.every(isReady) && pods.every((p) => !p.spec?.initContainers?.some((c) => c.name === RESTORE_STEP));
    return plain ? pods : undefined;
  });
  const ids = await memberIds(bed, 'restored');
  const [victim] = rolled;
  const node = victim?.spec?.nodeName ?? '';
  const guardBefore = victim?.status?.initContainerStatuses?.[0]?.containerID;
  const rebootedAt = Date.now();
  await rebootNode(node);
  // The member on that node runs its init containers again (a new sandbox), and starts on the data it had.
  const again = await eventually(`${victim?.metadata?.name ?? ''} through its init containers again`, 180_000, async () => {
    const pod = await bed.core.readNamespacedPod({ name: victim?.metadata?.name ?? '', namespace: bed.namespace });
    const guard = pod.status?.initContainerStatuses?.[0]?.containerID;
    return guard !== undefined && guard !== guardBefore && isReady(pod) ? pod : undefined;
  });
  // On its own: not a pod the operator deleted and made anew after the member had been silent too long.
  assert.equal(again.metadata?.uid, victim?.metadata?.uid, 'the same pod came back by itself');
  const back = await eventually('the members back after the reboot', 240_000, async () => {
    const pods = await bed.settledMembers('restored', 3);
    return pods && JSON.stringify(pods) === JSON.stringify(rolled.map((p) => p.metadata?.name ?? '').sort()) ? pods : undefined;
  });
  t.diagnostic(`${back.join(', ')} settled ${Date.now() - rebootedAt} ms after ${node} was rebooted`);
  assert.deepEqual(await memberIds(bed, 'restored'), ids, 'the same members, under their own IDs');
  const held = await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('restored'), 'key-'));
  assert.equal(held.size, 1000, 'every key of the backup');
  operator.succeeded();
});

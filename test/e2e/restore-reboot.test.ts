// lab: exclusive — a node is rebooted.
// Issue 16, item 6, and issue 36's restore in one pass: a restored cluster's members keep the pods that restored
// them, and come back from a node reboot, which runs a pod's init containers again: a restore step that ran again
// over the member's data would fail on it for ever (etcdutl refuses a directory that is not empty), or restore the
// snapshot over what the member wrote since.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FETCH_STEP, RESTORE_STEP, TIDY_STEP } from '../../src/k8s/member-pod.js';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, isReady, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import { restoreToEnd, takeBackup } from '../support/backup-bed.js';
import { rebootNode } from '../support/faults.js';
import { memberIds } from '../support/chaos.js';

test('a cluster restored onto volumes keeps the pods that restored it; on a node reboot their restore steps run again, fetch nothing, and the member comes back on its own data', async (t) => {
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
  const restore = await restoreToEnd(bed, 'back', { etcdCluster: { name: 'restored' }, backupStorageType: 'S3', s3, clusterSpec: { size: 3, pod: { ...ON_VOLUMES, antiAffinity: true } } });
  assert.equal(restore.status?.phase, 'Completed', JSON.stringify(restore.status));

  // Completed with the pods that restored the data: no member is replaced or restarted for its restore steps. (One
  // member per node from the start: members that shared a node would be spread, by a member added and one removed.)
  const atCompleted = await bed.pods('restored');
  const uids = (pods: typeof atCompleted): string[] => pods.map((p) => p.metadata?.uid ?? '').sort();
  assert.equal(atCompleted.length, 3);
  for (const p of atCompleted) assert.ok(p.spec?.initContainers?.some((c) => c.name === TIDY_STEP), `${p.metadata?.name ?? ''} restored the data with re-runnable steps`);
  // Written after the restore: a restore step that ran again over the data would take it back.
  await etcdPutMany(await bed.clientEndpoint('restored'), [['after-restore', 'kept']]);
  const rolled = await eventually('the restored cluster settled on the same pods', 120_000, async () => {
    const pods = await bed.settledMembers('restored', 3);
    const now = await bed.pods('restored');
    return pods && JSON.stringify(uids(now)) === JSON.stringify(uids(atCompleted)) && now.every(isReady) ? now : undefined;
  });
  const ids = await memberIds(bed, 'restored');
  const victim = rolled.find((p) => p.spec?.initContainers?.some((c) => c.name === RESTORE_STEP));
  assert.ok(victim, 'a member still on the pod that restored it');
  const node = victim.spec?.nodeName ?? '';
  const guardBefore = victim.status?.initContainerStatuses?.[0]?.containerID;
  const rebootedAt = Date.now();
  await rebootNode(node);
  // The member on that node runs its init containers again (a new sandbox), and starts on the data it had.
  const again = await eventually(`${victim.metadata?.name ?? ''} through its init containers again`, 180_000, async () => {
    const pod = await bed.core.readNamespacedPod({ name: victim.metadata?.name ?? '', namespace: bed.namespace });
    const guard = pod.status?.initContainerStatuses?.[0]?.containerID;
    return guard !== undefined && guard !== guardBefore && isReady(pod) ? pod : undefined;
  });
  // On its own: not a pod the operator deleted and made anew after the member had been silent too long.
  assert.equal(again.metadata?.uid, victim.metadata?.uid, 'the same pod came back by itself');
  const fetchLog = await bed.core.readNamespacedPodLog({ name: victim.metadata?.name ?? '', namespace: bed.namespace, container: FETCH_STEP });
  assert.match(fetchLog, /in place already: nothing fetched/, 'the steps ran again without fetching the backup');
  const back = await eventually('the members back after the reboot', 240_000, async () => {
    const pods = await bed.settledMembers('restored', 3);
    return pods && JSON.stringify(pods) === JSON.stringify(rolled.map((p) => p.metadata?.name ?? '').sort()) ? pods : undefined;
  });
  t.diagnostic(`${back.join(', ')} settled ${Date.now() - rebootedAt} ms after ${node} was rebooted`);
  assert.deepEqual(await memberIds(bed, 'restored'), ids, 'the same members, under their own IDs');
  const held = await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('restored'), 'key-'));
  assert.equal(held.size, 1000, 'every key of the backup');
  assert.equal((await etcdGetPrefix(await bed.clientEndpoint('restored'), 'after-restore')).get('after-restore'), 'kept', 'and what was written after the restore');
  operator.succeeded();
});

// Issue 32, finding 2(b): claims of two earlier incarnations of one name (an EtcdRestore of that name leaves the
// first incarnation's claims alone; then the cluster is deleted and created again). Adopted together, each set
// restarted as an etcd cluster of its own behind the one client Service. Exactly one incarnation must be adopted,
// the newest that ran, and the other named and left alone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGet, etcdGetPrefix, etcdPut, etcdPutMany } from '../support/etcd-gateway.js';
import { startMinio } from '../support/minio.js';
import { restoreToEnd, takeBackup } from '../support/backup-bed.js';

test('claims of two incarnations of one name: the newest is adopted, the other named and never started', async (t) => {
  const bed = await testbed(t, 'incarnations');
  const minio = await startMinio(t, 'backups');
  await bed.secret('aws', minio.awsSecretData);
  const operator = startOperator(t, bed.namespace);
  const claimsOf = async (): Promise<V1PersistentVolumeClaim[]> =>
    (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace, labelSelector: 'etcd_cluster=twice' })).items.filter((c) => !c.metadata?.deletionTimestamp);
  const deleteCluster = async (claims: number): Promise<void> => {
    await bed.transport.call('DELETE', `${bed.path}/twice`);
    await eventually(`deleted, ${claims} claims kept`, 120_000, async () => ((await bed.pods('twice')).length === 0 && (await claimsOf()).length === claims) || undefined);
  };

  // The first incarnation, on volumes, backed up and deleted: its three claims stay.
  await bed.create('twice', { size: 3, pod: ON_VOLUMES });
  const first = await eventually('the first incarnation: 3 members', 120_000, () => bed.settledMembers('twice', 3));
  await eventually('keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('twice'), [['written-by', 'first'], ['shared', 'first']]); return true; });
  const s3 = { path: 'backups/twice.db', awsSecret: 'aws', endpoint: minio.endpoint, forcePathStyle: true };
  await takeBackup(bed, 'snap', { clusterName: 'twice', storageType: 'S3', s3 }, 60_000);
  await deleteCluster(3);

  // The second: restored from that backup under the same name, on volumes of its own; it writes on.
  const restored = await restoreToEnd(bed, 'again', { etcdCluster: { name: 'twice' }, backupStorageType: 'S3', s3, clusterSpec: { size: 3, pod: ON_VOLUMES } }, 240_000);
  assert.equal(restored.status?.phase, 'Completed', JSON.stringify(restored.status));
  const second = await eventually('the second incarnation: 3 members', 240_000, () => bed.settledMembers('twice', 3));
  assert.ok(second.every((m) => !first.includes(m)), 'members of its own');
  await eventually('the second writes on', 60_000, async () => etcdPut(await bed.clientEndpoint('twice'), 'written-by', 'second'));
  await deleteCluster(6);

  // Created again: one incarnation comes back, the newest.
  const recreated = Date.now();
  await bed.create('twice', { size: 3, pod: ON_VOLUMES });
  const seen = new Set<string>();
  const back = await eventually('3 members again', 240_000, async () => {
    for (const p of await bed.core.listNamespacedPod({ namespace: bed.namespace, labelSelector: 'etcd_cluster=twice' }).then((l) => l.items)) seen.add(p.metadata?.name ?? '');
    return bed.settledMembers('twice', 3);
  });
  t.diagnostic(`re-formed on ${back.join(', ')} ${((Date.now() - recreated) / 1000).toFixed(1)} s after it was created again; pods seen: ${[...seen].sort().join(', ')}`);
  assert.deepEqual(back, second, 'the newest incarnation\'s members');
  assert.deepEqual([...seen].filter((p) => first.includes(p)), [], 'no pod of the first incarnation ever started');
  const endpoint = await bed.clientEndpoint('twice');
  assert.equal(await eventually('a read', 30_000, () => etcdGet(endpoint, 'written-by')), 'second', 'the newest data');
  assert.equal((await etcdGetPrefix(endpoint, 'shared')).get('shared'), 'first', 'with what it restored');
  const adopted = await eventually('an Event naming the claims left alone', 30_000, async () => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .find((e) => e.involvedObject.name === 'twice' && /of an earlier incarnation are left alone/.test(e.message ?? '')));
  for (const m of first) assert.ok(adopted.message?.includes(m), `names ${m}: ${adopted.message ?? ''}`);
  const told = await eventually('a condition naming them', 30_000, async () =>
    (await bed.get('twice')).status?.conditions?.find((c) => c.type === 'ClaimsLeft' && c.status === 'True'));
  for (const m of first) assert.ok(told.message?.includes(m), `the condition names ${m}: ${told.message ?? ''}`);
  // Left alone: still there, for a person to delete once their data is not needed.
  const left = (await claimsOf()).map((c) => c.metadata?.name ?? '').filter((c) => first.includes(c));
  assert.deepEqual(left.sort(), first);
  operator.succeeded();
});

// lab: exclusive — the CRDs are deleted, and with them every custom resource on the lab.
// Issue 16, item 5: deleting the CRDs (as `kubectl delete -f deploy/etcd-operator.yaml` does) must not delete
// etcd's data; an EtcdCluster of the same name created again re-forms the cluster on it.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { allCrds } from '../../src/api/crds.js';
import { ANNOTATION_CLUSTER_UID } from '../../src/k8s/labels.js';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import { ensureCrd } from '../support/test-crd.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';
import { memberIds } from '../support/chaos.js';
import { kubectl } from '../support/kubectl.js';

test('the CRDs deleted with clusters running: the claims and their data stay (unless the policy says Delete), and a re-created EtcdCluster of the name re-forms on them with every key', async (t) => {
  const bed = await testbed(t, 'retain');
  const operator = startOperator(t, bed.namespace);
  const claimsOf = async (cluster: string): Promise<V1PersistentVolumeClaim[]> =>
    (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace, labelSelector: `etcd_cluster=${cluster}` })).items;

  await bed.create('kept', { size: 3, pod: ON_VOLUMES });
  await bed.create('collected', { size: 1, pod: ON_VOLUMES, persistentVolumeClaimRetentionPolicy: { whenDeleted: 'Delete' } });
  const members = await eventually('kept: 3 members', 240_000, () => bed.settledMembers('kept', 3));
  await eventually('collected: 1 member', 240_000, () => bed.settledMembers('collected', 1));
  const keys = Array.from({ length: 1000 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('1,000 keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('kept'), keys); return true; });
  const ids = await memberIds(bed, 'kept');

  kubectl(['delete', 'crd', ...allCrds().map((c) => c.metadata.name), '--wait=true', '--timeout=50s']);
  await eventually('every member pod collected', 180_000, async () => ((await bed.pods('kept')).length + (await bed.pods('collected')).length === 0) || undefined);
  await eventually('the Delete policy\'s claim collected', 120_000, async () => (await claimsOf('collected')).length === 0 || undefined);
  const kept = await claimsOf('kept');
  assert.deepEqual(kept.map((c) => c.metadata?.name).sort(), members, 'every member claim of the Retain policy is still there');
  assert.ok(kept.every((c) => c.status?.phase === 'Bound' && !c.metadata?.deletionTimestamp), 'bound, and not being deleted');

  for (const crd of allCrds()) await ensureCrd(bed.transport, crd);
  const recreatedAt = Date.now();
  const again = await bed.create('kept', { size: 3, pod: ON_VOLUMES });
  const back = await eventually('kept re-formed: 3 members', 300_000, () => bed.settledMembers('kept', 3));
  t.diagnostic(`re-formed on ${back.join(', ')} ${Date.now() - recreatedAt} ms after the EtcdCluster was created again`);
  assert.deepEqual(back, members, 'the same members, on their claims');
  assert.deepEqual(await memberIds(bed, 'kept'), ids, 'under their own IDs: the cluster re-formed, it was not bootstrapped anew');
  const held = await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('kept'), 'key-'));
  assert.equal(held.size, 1000, 'every key');
  const adopted = await claimsOf('kept');
  assert.ok(adopted.every((c) => c.metadata?.annotations?.[ANNOTATION_CLUSTER_UID] === again.metadata.uid),
    'the claims are the new EtcdCluster\'s now');
  operator.succeeded();
});

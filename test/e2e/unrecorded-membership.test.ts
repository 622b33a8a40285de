// Issue 32, finding 9: every pod gone, the claims intact, and no membership recorded in status (an operator
// upgraded from a version whose status had none, or a cluster adopted). The members must restart on their claims,
// not wait for ever; where the claims do not say a member ran on them (an earlier version's), the cluster is
// Degraded with what a person must do, and does it once they say so.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import type { Testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPutMany } from '../support/etcd-gateway.js';

const STARTED = 'etcd.database.coreos.com/member-started';

/** Stops the operator, deletes every pod of the cluster, and removes what status records of its membership. */
async function forgetEverything(bed: Testbed, cluster: string, stopOperator: () => Promise<void>): Promise<void> {
  await stopOperator();
  for (const p of await bed.pods(cluster)) await bed.core.deleteNamespacedPod({ name: p.metadata?.name ?? '', namespace: bed.namespace, gracePeriodSeconds: 0 });
  await eventually('every pod gone', 60_000, async () => ((await bed.core.listNamespacedPod({ namespace: bed.namespace, labelSelector: `etcd_cluster=${cluster}` })).items.length === 0) || undefined);
  const status = (await bed.get(cluster)).status ?? {};
  const ops = (['membership', 'members', 'leader'] as const).filter((f) => status[f] !== undefined).map((f) => ({ op: 'remove', path: `/status/${f}` }));
  await bed.transport.call('PATCH', `${bed.path}/${cluster}/status`, ops, 'application/json-patch+json');
}

test('all pods gone and no membership in status: the members restart on their claims; claims that do not say they held one wait for a person, named', async (t) => {
  const bed = await testbed(t, 'unrecorded');
  let operator = startOperator(t, bed.namespace);
  await bed.create('kept', { size: 3, pod: ON_VOLUMES });
  const members = await eventually('3 members on volumes', 120_000, () => bed.settledMembers('kept', 3));
  const keys = Array.from({ length: 300 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('300 keys written', 60_000, async () => { await etcdPutMany(await bed.clientEndpoint('kept'), keys); return true; });
  const claims = async (): Promise<V1PersistentVolumeClaim[]> => (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace, labelSelector: 'etcd_cluster=kept' })).items;
  assert.ok((await claims()).every((c) => c.metadata?.annotations?.[STARTED] === 'true'), 'the claims say their members ran');

  // As a cluster made by an operator that recorded nothing finds it: claims that say their members ran.
  await forgetEverything(bed, 'kept', () => operator.stop());
  operator = startOperator(t, bed.namespace);
  let started = Date.now();
  const back = await eventually('the members restarted on their claims', 180_000, () => bed.settledMembers('kept', 3));
  t.diagnostic(`restarted on their claims ${((Date.now() - started) / 1000).toFixed(1)} s after the operator started: ${back.join(', ')}`);
  assert.deepEqual(back, members, 'the same members, on their own claims');
  assert.equal((await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('kept'), 'key-'))).size, 300, 'every key');

  // As an earlier operator version left it: claims that say nothing about a member. Whether each holds a member's
  // data is a person's word: the cluster says what to do, and does it once told.
  await forgetEverything(bed, 'kept', () => operator.stop());
  for (const c of await claims()) {
    await bed.transport.call('PATCH', `/api/v1/namespaces/${bed.namespace}/persistentvolumeclaims/${c.metadata?.name ?? ''}`,
      [{ op: 'remove', path: `/metadata/annotations/${STARTED.replace('/', '~1')}` }], 'application/json-patch+json');
  }
  operator = startOperator(t, bed.namespace);
  const blocked = await eventually('Degraded, saying what to do', 60_000, async () =>
    (await bed.get('kept')).status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'MembershipUnknown'));
  t.diagnostic(`Degraded MembershipUnknown: ${blocked.message ?? ''}`);
  assert.match(blocked.message ?? '', /kubectl annotate pvc/);
  for (const m of members) assert.ok(blocked.message?.includes(m), `names claim ${m}`);
  await eventually('a Warning Event of that reason', 30_000, async () => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .find((e) => e.involvedObject.name === 'kept' && e.type === 'Warning' && e.reason === 'MembershipUnknown'));
  assert.deepEqual(await bed.pods('kept'), [], 'nothing started on claims nobody vouched for');
  for (const m of members) {
    await bed.transport.call('PATCH', `/api/v1/namespaces/${bed.namespace}/persistentvolumeclaims/${m}`, { metadata: { annotations: { [STARTED]: 'true' } } }, 'application/merge-patch+json');
  }
  started = Date.now();
  const vouched = await eventually('the members restarted once their claims were vouched for', 180_000, () => bed.settledMembers('kept', 3));
  t.diagnostic(`restarted ${((Date.now() - started) / 1000).toFixed(1)} s after the claims were marked`);
  assert.deepEqual(vouched, members);
  assert.equal((await eventually('keys readable', 30_000, async () => etcdGetPrefix(await bed.clientEndpoint('kept'), 'key-'))).size, 300, 'every key');
  operator.succeeded();
});

// Issue 32, findings 1 and 2(a): a bootstrap on volumes whose pods never ran must not wait for ever. A size-1
// cluster whose only pod cannot start (an etcd version with no image) is fixed by correcting its version; a cluster
// on volumes that never ran, deleted and created again (the natural reaction), bootstraps afresh instead of
// adopting its empty claims as members.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGet, etcdPut } from '../support/etcd-gateway.js';
import { DEFAULT_ETCD_VERSION } from '../../src/api/etcd-cluster.js';

/** A release the lab has no image of: the pods stay in ErrImageNeverPull, their etcd never runs. */
const NO_IMAGE = '3.5.99';

test('a bootstrap on volumes that never ran: fixing the version starts it, and deleting and creating it again bootstraps afresh', async (t) => {
  const bed = await testbed(t, 'never-ran');
  const operator = startOperator(t, bed.namespace);
  const claimsOf = async (cluster: string): Promise<V1PersistentVolumeClaim[]> =>
    (await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace, labelSelector: `etcd_cluster=${cluster}` })).items.filter((c) => !c.metadata?.deletionTimestamp);

  // Finding 1: the only pod cannot start; the version is fixed. The outdated pod goes, and the bootstrap must
  // come back on its claim rather than wait on "pods or claims of an unknown bootstrap".
  await bed.create('solo', { size: 1, version: NO_IMAGE, pod: ON_VOLUMES });
  // Finding 2(a): three members on volumes that never ran.
  await bed.create('again', { size: 3, version: NO_IMAGE, pod: ON_VOLUMES });
  await eventually('the pods made, their etcd not running', 120_000, async () => ((await bed.pods('solo')).length === 1 && (await claimsOf('again')).length === 3) || undefined);
  await new Promise((r) => setTimeout(r, 10_000));

  await bed.patchSpec('solo', { version: DEFAULT_ETCD_VERSION });
  await bed.transport.call('DELETE', `${bed.path}/again`);
  await eventually('again deleted, its claims kept', 120_000, async () => ((await bed.pods('again')).length === 0 && (await claimsOf('again')).length === 3) || undefined);
  const fixedAt = Date.now();
  await bed.create('again', { size: 3, pod: ON_VOLUMES });

  const solo = await eventually('solo: its one member running after the fix', 240_000, () => bed.settledMembers('solo', 1));
  t.diagnostic(`solo running ${((Date.now() - fixedAt) / 1000).toFixed(1)} s after its version was fixed: ${solo.join(', ')}`);
  const again = await eventually('again: 3 members bootstrapped afresh', 300_000, () => bed.settledMembers('again', 3));
  t.diagnostic(`again running ${((Date.now() - fixedAt) / 1000).toFixed(1)} s after it was created again: ${again.join(', ')}`);
  // Settled as asked (the members may then be spread over the nodes: the phase moves on, so it is not asked).
  const recreated = await bed.get('again');
  for (const name of ['solo', 'again']) {
    const endpoint = await bed.clientEndpoint(name);
    await eventually(`${name} takes a write`, 30_000, () => etcdPut(endpoint, 'k', name));
    assert.equal(await etcdGet(endpoint, 'k'), name);
  }
  const claims = await claimsOf('again');
  const uidOf = (c: V1PersistentVolumeClaim): string | undefined => c.metadata?.annotations?.['etcd.database.coreos.com/cluster-uid'];
  const inUse = claims.filter((c) => again.includes(c.metadata?.name ?? ''));
  assert.equal(inUse.length, 3);
  assert.ok(inUse.every((c) => uidOf(c) === recreated.metadata.uid), 'the claims in use are the new cluster\'s');
  // The first incarnation's claims, which should hold no data, are left alone (a "never ran" mark may be stale)
  // and named in a condition for a person to delete.
  const left = claims.filter((c) => !again.includes(c.metadata?.name ?? ''));
  const named = await eventually('the claims left named in a condition', 30_000, async () =>
    (await bed.get('again')).status?.conditions?.find((c) => c.type === 'ClaimsLeft' && c.status === 'True'));
  for (const c of left) assert.ok(named.message?.includes(`${c.metadata?.name ?? ''} (says its member never ran)`), named.message);
  t.diagnostic(`left aside: ${left.map((c) => `${c.metadata?.name ?? ''} (${c.metadata?.annotations?.['etcd.database.coreos.com/member-started'] ?? '?'})`).join(', ')}`);
  assert.ok(left.every((c) => uidOf(c) !== recreated.metadata.uid && c.metadata?.annotations?.['etcd.database.coreos.com/member-started'] === 'false'), 'only never-ran claims of the first incarnation are left');
  operator.succeeded();
});

test('a claim whose "never ran" mark is stale (its member ran while the operator was stopped) is never deleted: it is kept and named (issue 32, trial)', async (t) => {
  const bed = await testbed(t, 'stale-mark');
  let operator = startOperator(t, bed.namespace, ['--keep-removed-claims', '20']);
  await bed.create('stale', { size: 1, pod: ON_VOLUMES });
  const [member = ''] = await eventually('its member running', 120_000, () => bed.settledMembers('stale', 1));
  const endpoint = await bed.clientEndpoint('stale');
  await eventually('a write', 30_000, () => etcdPut(endpoint, 'acknowledged', 'yes'));
  // As the claim is left when the operator stops between making the pod and seeing its etcd start.
  await operator.stop();
  await bed.transport.call('PATCH', `/api/v1/namespaces/${bed.namespace}/persistentvolumeclaims/${member}`,
    { metadata: { annotations: { 'etcd.database.coreos.com/member-started': 'false' } } }, 'application/merge-patch+json');
  await bed.transport.call('DELETE', `${bed.path}/stale`);
  await eventually('its pod gone', 60_000, async () => ((await bed.pods('stale')).length === 0) || undefined);
  operator = startOperator(t, bed.namespace, ['--keep-removed-claims', '20']);
  await bed.create('stale', { size: 1, pod: ON_VOLUMES });
  await eventually('a new member', 120_000, () => bed.settledMembers('stale', 1));
  const told = await eventually('the claim named', 30_000, async () =>
    (await bed.get('stale')).status?.conditions?.find((c) => c.type === 'ClaimsLeft' && c.status === 'True'));
  assert.match(told.message ?? '', new RegExp(`${member} \\(says its member never ran\\)`));
  // Well past the grace period for claims of no member.
  await new Promise((r) => setTimeout(r, 45_000));
  const kept = await bed.core.readNamespacedPersistentVolumeClaim({ name: member, namespace: bed.namespace }).then((c) => !c.metadata?.deletionTimestamp, () => false);
  assert.ok(kept, `claim ${member}, holding an acknowledged write, is kept`);
  operator.succeeded();
});

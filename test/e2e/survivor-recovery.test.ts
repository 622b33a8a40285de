import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { eventually } from '../support/lab.js';
import { isReady, ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGetPrefix, etcdPut, etcdPutMany } from '../support/etcd-gateway.js';
import { checkedLoad } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';

test('with volumes, 2 of 3 members lost for good: the opt-in recovery restarts the survivor alone and scales back to 3 with every key it had', async (t) => {
  const bed = await testbed(t, 'survivor');
  const operator = startOperator(t, bed.namespace);
  // The default version's --force-new-cluster keeps what the database holds (3.5.22+; 3.5.17 is refused for it).
  await bed.create('kept', { size: 3, pod: ON_VOLUMES, restorePolicy: { fromSurvivor: 'auto' } });
  const running = async (): Promise<EtcdCluster | undefined> => {
    const c = await bed.get('kept');
    const pods = await bed.pods('kept');
    return c.status?.phase === 'Running' && c.status.readyMembers === 3 && pods.length === 3 && pods.every(isReady) ? c : undefined;
  };
  await eventually('3 members on volumes', 120_000, running);
  const endpoint = `http://${(await bed.core.readNamespacedService({ name: 'kept-client', namespace: bed.namespace })).spec?.clusterIP ?? ''}:2379`;
  const keys = Array.from({ length: 1000 }, (_, i): [string, string] => [`key-${i}`, `value-${i}`]);
  await eventually('1,000 keys written', 60_000, async () => { await etcdPutMany(endpoint, keys); return true; });

  // Two members gone for good: pods and volumes. Paused meanwhile, so that the pods are not brought back.
  await bed.patchSpec('kept', { paused: true });
  await eventually('paused', 30_000, async () => ((await bed.get('kept')).status?.phase === 'Paused' ? true : undefined));
  const [lostA, lostB, survivor] = (await bed.pods('kept')).map((p) => p.metadata?.name ?? '');
  for (const name of [lostA, lostB]) {
    await bed.core.deleteNamespacedPod({ name: name ?? '', namespace: bed.namespace, gracePeriodSeconds: 0 });
    await bed.core.deleteNamespacedPersistentVolumeClaim({ name: name ?? '', namespace: bed.namespace });
  }
  await eventually('the two claims gone', 60_000, async () =>
    ((await bed.core.listNamespacedPersistentVolumeClaim({ namespace: bed.namespace })).items.length === 1 ? true : undefined));
  // Clients from here on, through the recovery and the scale back to 3: nothing acknowledged from now on may be
  // lost or read stale. (One acknowledged by the two lost members alone before the loss may be, the price of the
  // opt-in recovery: the load starts once they serve no more. Deleted at once, their containers still run for
  // a moment.)
  await eventually('the lost majority serving no more', 60_000, async () =>
    etcdPut(endpoint, 'probe', 'x', { timeoutMs: 2000, fresh: true }).then(() => undefined, () => true));
  const load = checkedLoad(bed, endpoint, 'kept');
  const started = Date.now();
  await bed.patchSpec('kept', { paused: false });

  const recovered = await eventually('back to 3 members from the survivor', 180_000, async () => {
    const c = await running();
    return c?.status?.survivorRecovery?.completedAt ? c : undefined;
  });
  t.diagnostic(`recovered from ${survivor ?? ''} in ${Date.now() - started} ms: ${JSON.stringify(recovered.status?.survivorRecovery)}`);
  assert.equal(recovered.status?.survivorRecovery?.survivor, survivor);
  assert.ok((recovered.status?.survivorRecovery?.revision ?? 0) > 1);
  assert.ok((recovered.status?.members?.ready ?? []).includes(survivor ?? ''), 'the survivor is a member');
  const command = (await bed.core.readNamespacedPod({ name: survivor ?? '', namespace: bed.namespace })).spec?.containers[0]?.command ?? [];
  assert.ok(!command.includes('--force-new-cluster'), 'the survivor no longer runs with --force-new-cluster');
  const held = await eventually('keys readable', 30_000, () => etcdGetPrefix(endpoint, 'key-'));
  assert.equal(held.size, 1000, 'every key the survivor had');
  const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
  assert.ok(events.some((e) => e.reason === 'StartSurvivorRecovery' && e.type === 'Warning'));
  checkLoad(t, 'through the recovery', await load.finish());
  operator.succeeded();
});

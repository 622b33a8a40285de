// Issue 32, finding 7: a member pod stuck stopping (here a finalizer holds it) was waited for, silently, for ever.
// Past the bound the cluster is Degraded PodStuckStopping, naming the pod and its finalizer and how to remove
// it; removed, the member comes back on its data.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { eventually } from '../support/lab.js';
import { ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGet, etcdPut } from '../support/etcd-gateway.js';

const FINALIZER = 'example.com/hold';
/** Shorter than the default 5 minutes (ten grace periods), which this test would otherwise wait out. */
const STUCK_AFTER_S = 60;

test('a member pod held by a finalizer once deleted is named within the bound with the finalizer and how to remove it; removed, the member returns on its data', async (t) => {
  const bed = await testbed(t, 'stuck');
  const operator = startOperator(t, bed.namespace, ['--stuck-stopping-after', String(STUCK_AFTER_S)]);
  await bed.create('held', { size: 1, pod: ON_VOLUMES });
  const [member = ''] = await eventually('its member running', 120_000, () => bed.settledMembers('held', 1));
  await eventually('a write', 30_000, async () => etcdPut(await bed.clientEndpoint('held'), 'kept', 'yes'));
  const podPath = `/api/v1/namespaces/${bed.namespace}/pods/${member}`;
  const release = async (): Promise<void> => {
    await bed.transport.call('PATCH', podPath, [{ op: 'remove', path: '/metadata/finalizers' }], 'application/json-patch+json').catch(() => undefined);
  };
  t.after(release);
  await bed.transport.call('PATCH', podPath, { metadata: { finalizers: [FINALIZER] } }, 'application/merge-patch+json');
  const deleted = Date.now();
  await bed.transport.call('DELETE', podPath);
  const told = await eventually('Degraded PodStuckStopping', (STUCK_AFTER_S + 120) * 1000, async () =>
    (await bed.get('held')).status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True' && c.reason === 'PodStuckStopping'));
  const namedAfterS = (Date.now() - deleted) / 1000;
  t.diagnostic(`named ${namedAfterS.toFixed(1)} s after the delete: ${told.message ?? ''}`);
  assert.ok(namedAfterS >= STUCK_AFTER_S, `named only past the bound, not ${namedAfterS} s after the delete`);
  assert.ok(told.message?.includes(`pod ${member} carries finalizers ${FINALIZER}`), told.message);
  assert.match(told.message ?? '', /kubectl patch pod .* --type=json -p '\[\{"op":"remove","path":"\/metadata\/finalizers"\}\]'/);
  await eventually('a Warning Event of that reason', 30_000, async () => (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items
    .find((e) => e.involvedObject.name === 'held' && e.type === 'Warning' && e.reason === 'PodStuckStopping'));
  await release();
  await eventually('the member back on its data', 120_000, () => bed.settledMembers('held', 1));
  assert.equal(await eventually('the key', 30_000, async () => etcdGet(await bed.clientEndpoint('held'), 'kept')), 'yes');
  operator.succeeded();
});

// lab: exclusive — the node of the operator's leader is killed.
// Issue 32, finding 15: the operator as shipped (two replicas, leader election) survives the loss of its
// leader's node: the standby takes the lease and acts within a lease period, not after Kubernetes' five-minute
// eviction of the dead node's pods.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Lease } from '@kubernetes/client-node';
import { DEFAULT_INSTALL } from '../../src/install/manifests.js';
import { installOperator, operatorPods, operatorReady } from '../support/in-cluster.js';
import { eventually } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { inject } from '../support/faults.js';

test('the operator\'s leader\'s node killed: the standby replica on another node leads and acts on a new cluster within 90 s', async (t) => {
  const bed = await testbed(t, 'op-node');
  installOperator({ ...DEFAULT_INSTALL, namespace: bed.namespace, image: 'etcd-operator:dev', imagePullPolicy: 'Never' });
  await operatorReady(bed);
  const holder = async (): Promise<string> => ((await bed.transport.call('GET', `/apis/coordination.k8s.io/v1/namespaces/${bed.namespace}/leases/etcd-operator`)) as V1Lease).spec?.holderIdentity ?? '';
  const replicas = await operatorPods(bed);
  assert.equal(replicas.length, 2, 'two replicas as shipped');
  // The identity is the pod's hostname (its name) and the process id.
  const leading = await eventually('a replica leading', 60_000, async () => {
    const h = await holder();
    return replicas.find((p) => h.startsWith(`${p.metadata?.name ?? '-'}-`));
  });
  const standby = replicas.find((p) => p !== leading);
  const node = leading.spec?.nodeName ?? '';
  assert.notEqual(standby?.spec?.nodeName, node, 'the replicas are spread over two nodes');

  const killedAt = Date.now();
  await inject(t, { kind: 'node-kill', node });
  await bed.create('after', { size: 1 });
  await eventually('the standby acting on a cluster made after the kill', 180_000, async () => ((await bed.pods('after')).length > 0 ? true : undefined));
  const actedS = (Date.now() - killedAt) / 1000;
  const now = await holder();
  t.diagnostic(`killed ${node} (leader ${leading.metadata?.name}); the standby ${standby?.metadata?.name} holds the lease (${now}) and acted ${actedS.toFixed(1)} s after the kill`);
  assert.ok(now.startsWith(`${standby?.metadata?.name ?? '-'}-`), `the standby leads: ${now}`);
  assert.ok(actedS < 90, `acted within 90 s of the kill (${actedS.toFixed(1)} s), not after the 300 s eviction`);
});

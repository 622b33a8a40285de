import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Lease, V1Pod } from '@kubernetes/client-node';
import { DEFAULT_INSTALL, NAME } from '../../src/install/manifests.js';
import { installOperator as install, operatorReady } from '../support/in-cluster.js';
import { eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import { kubectl } from '../support/kubectl.js';
import { etcdGet, etcdPut } from '../support/etcd-gateway.js';

/** `kubectl auth can-i` as the operator's ServiceAccount: true for yes, false for no. */
function operatorCan(namespace: string, verb: string, resource: string, inNamespace?: string, subresource?: string): boolean {
  const args = ['auth', 'can-i', verb, resource, '--as', `system:serviceaccount:${namespace}:${NAME}`, ...(inNamespace ? ['-n', inNamespace] : []),
    ...(subresource ? [`--subresource=${subresource}`] : [])];
  try {
    return kubectl(args).trim() === 'yes';
  } catch (err) {
    if ((err as { status?: number }).status === 1) return false;
    throw err;
  }
}

test('the operator as a Deployment on the lab (non-root, read-only root, its own ServiceAccount) runs a cluster end to end', async (t) => {
  const bed = await testbed(t, 'incluster');
  install({ ...DEFAULT_INSTALL, namespace: bed.namespace, image: 'etcd-operator:dev', imagePullPolicy: 'Never' });
  await operatorReady(bed);
  const [operatorPod] = (await bed.core.listNamespacedPod({ namespace: bed.namespace, labelSelector: `app.kubernetes.io/name=${NAME}` })).items;
  assert.ok(operatorPod);
  const podSpec = operatorPod.spec;
  assert.ok(podSpec);
  const container = podSpec.containers[0];
  assert.deepEqual([podSpec.securityContext?.runAsUser, podSpec.securityContext?.runAsNonRoot], [65532, true], 'runs as non-root');
  assert.deepEqual([container?.securityContext?.readOnlyRootFilesystem, container?.securityContext?.capabilities?.drop], [true, ['ALL']], 'read-only, no capabilities');

  const started = Date.now();
  await bed.create('inpod', { size: 3 });
  const settled = async (): Promise<V1Pod[] | undefined> => {
    const c = await bed.get('inpod');
    const pods = await bed.pods('inpod');
    const available = c.status?.conditions?.find((x) => x.type === 'Available')?.status === 'True';
    return available && c.status?.readyMembers === 3 && pods.length === 3 && pods.every(isReady) ? pods : undefined;
  };
  const pods = await eventually('3 members Available', 120_000, settled);
  t.diagnostic(`in-cluster operator: 3 members Available ${Date.now() - started} ms after create`);
  // Auto TLS with the install's rights on Secrets (get, create, update: no list, no watch).
  await bed.create('intls', { size: 1, TLS: { auto: true } });
  await eventually('an auto-TLS member Available', 120_000, async () => {
    const c = await bed.get('intls');
    return c.status?.conditions?.find((x) => x.type === 'Available')?.status === 'True' || undefined;
  });
  const endpoint = await bed.clientEndpoint('inpod');
  await eventually('a key through the client Service', 30_000, () => etcdPut(endpoint, 'in-cluster', 'yes'));
  assert.equal(await etcdGet(endpoint, 'in-cluster'), 'yes');

  // A rolling update of the operator: the new replica is ready while it waits for the lease, so the rollout
  // completes, and the member lost next is replaced by the new replica.
  kubectl(['-n', bed.namespace, 'rollout', 'restart', `deployment/${NAME}`]);
  kubectl(['-n', bed.namespace, 'rollout', 'status', `deployment/${NAME}`, '--timeout=120s']);
  const lost = pods[0]?.metadata?.name ?? '';
  await bed.core.deleteNamespacedPod({ name: lost, namespace: bed.namespace, gracePeriodSeconds: 0 });
  const healed = await eventually('the lost member replaced', 120_000, async () => {
    const now = await settled();
    return now && !now.some((p) => p.metadata?.name === lost) ? now : undefined;
  });
  assert.equal(healed.length, 3);
  assert.equal(await etcdGet(endpoint, 'in-cluster'), 'yes', 'the key survived the replacement');

  // Two replicas: the one holding the lease (its identity is its pod name and process id) did the work.
  const replicas = (await bed.core.listNamespacedPod({ namespace: bed.namespace, labelSelector: `app.kubernetes.io/name=${NAME}` })).items.filter((p) => !p.metadata?.deletionTimestamp);
  const holder = ((await bed.transport.call('GET', `/apis/coordination.k8s.io/v1/namespaces/${bed.namespace}/leases/${NAME}`)) as V1Lease).spec?.holderIdentity ?? '';
  const newPod = replicas.find((p) => holder.startsWith(`${p.metadata?.name ?? '-'}-`));
  assert.ok(newPod, `the lease holder ${holder} is one of ${replicas.map((p) => p.metadata?.name).join(', ')}`);
  assert.ok(replicas.every((p) => p.metadata?.name !== operatorPod.metadata?.name), 'the operator was replaced by the rollout');
  const metrics = await (await fetch(`http://${newPod.status?.podIP ?? ''}:${DEFAULT_INSTALL.metricsPort}/metrics`)).text();
  assert.match(metrics, /controller_runtime_reconcile_total\{controller="etcdcluster",result="(success|requeue_after)"\} [1-9]/);
  assert.match(metrics, /^rest_client_requests_total\{method="POST",code="201"\} [1-9]/m, 'its API requests are counted');
  const logs = kubectl(['-n', bed.namespace, 'logs', `deployment/${NAME}`]).trim().split('\n');
  assert.ok(logs.every((line) => typeof (JSON.parse(line) as { msg?: unknown }).msg === 'string'), 'one JSON object a line');
});

test('namespaced RBAC grants the operator its namespace only; cluster-wide RBAC no more than the same verbs; Secrets by name only, never listed', async (t) => {
  const bed = await testbed(t, 'rbac');
  const ns = bed.namespace;
  install({ ...DEFAULT_INSTALL, namespace: ns });
  t.after(() => { kubectl(['delete', 'clusterrole,clusterrolebinding', `${NAME}-nodes-${ns}`, '--ignore-not-found']); });
  for (const [verb, resource, subresource] of [['create', 'pods'], ['delete', 'persistentvolumeclaims'], ['update', 'etcdclusters.etcd.database.coreos.com', 'status'],
    ['create', 'leases.coordination.k8s.io'], ['get', 'secrets'], ['patch', 'poddisruptionbudgets.policy']] as const) {
    assert.equal(operatorCan(ns, verb, resource, ns, subresource), true, `may ${verb} ${resource}${subresource ? `/${subresource}` : ''} in its namespace`);
  }
  for (const verb of ['get', 'list', 'watch']) assert.equal(operatorCan(ns, verb, 'nodes', undefined), true, `may ${verb} nodes (whether a member's node is lost or drained)`);
  const refused: [string, string, string | undefined, string?][] = [
    ['delete', 'nodes', undefined], ['patch', 'nodes', undefined], ['get', 'secrets', 'kube-system'], ['create', 'pods', 'default'], ['list', 'etcdclusters.etcd.database.coreos.com', 'default'],
    ['create', 'clusterroles.rbac.authorization.k8s.io', undefined], ['create', 'rolebindings.rbac.authorization.k8s.io', ns], ['*', '*', ns],
    ['update', 'etcdclusters.etcd.database.coreos.com', ns], ['delete', 'secrets', ns], ['list', 'secrets', ns], ['watch', 'secrets', ns], ['create', 'pods', ns, 'exec'], ['get', 'pods', ns, 'log'], ['delete', 'persistentvolumes', undefined],
  ];
  for (const [verb, resource, where, subresource] of refused) {
    assert.equal(operatorCan(ns, verb, resource, where, subresource), false, `may not ${verb} ${resource}${subresource ? `/${subresource}` : ''} in ${where ?? 'the cluster'}`);
  }

  install({ ...DEFAULT_INSTALL, namespace: ns, clusterWide: true });
  t.after(() => { kubectl(['delete', 'clusterrole,clusterrolebinding', NAME, '--ignore-not-found']); });
  assert.equal(operatorCan(ns, 'create', 'pods', 'default'), true, 'cluster-wide: pods in any namespace');
  // Secrets by name only: a list or a watch would read every Secret of the cluster.
  for (const [verb, resource, where] of [['delete', 'nodes', undefined], ['create', 'leases.coordination.k8s.io', 'default'], ['delete', 'secrets', 'kube-system'],
    ['list', 'secrets', 'kube-system'], ['watch', 'secrets', undefined], ['list', 'secrets', undefined],
    ['create', 'clusterroles.rbac.authorization.k8s.io', undefined], ['*', '*', 'default']] as const) {
    assert.equal(operatorCan(ns, verb, resource, where), false, `cluster-wide: may not ${verb} ${resource} in ${where ?? 'the cluster'}`);
  }
});

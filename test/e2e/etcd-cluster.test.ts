import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { etcdClusterCrd } from '../../src/api/crds.js';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { adminKubeConfig, eventually, lab, testNamespace } from '../support/lab.js';
import { ensureCrd } from '../support/test-crd.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGet, etcdPut } from '../support/etcd-gateway.js';

const isReady = (p: V1Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

test('EtcdCluster end to end: bootstrap, data through the client Service, scale 3→5→3, replace a lost member, delete', async (t) => {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const transport = new ApiTransport(kc);
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const namespace = await testNamespace(t, 'e2e');
  const operator = startOperator(t, namespace);
  let finished = false;
  t.after(() => { if (!finished) t.diagnostic(operator.logs.slice(-30).join('\n')); });
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`;
  const version = (lab().etcdImages[0] ?? '').split(':v')[1] ?? '';
  const get = async (): Promise<EtcdCluster> => (await transport.call('GET', `${path}/example`)) as EtcdCluster;
  const settled = (size: number) => async (): Promise<EtcdCluster | undefined> => {
    const c = await get();
    const available = c.status?.conditions?.find((x) => x.type === 'Available')?.status === 'True';
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=example' })).items.filter((p) => !p.metadata?.deletionTimestamp);
    return available && c.status?.size === size && c.status.readyMembers === size && c.status.phase === 'Running'
      && pods.length === size && pods.every(isReady) ? c : undefined;
  };
  const memberSet = (c: EtcdCluster): string[] => [...(c.status?.members?.ready ?? [])].sort();

  let started = Date.now();
  await transport.call('POST', path, { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name: 'example' }, spec: { size: 3, version } });
  const up = await eventually('3 members Available', 120_000, settled(3));
  t.diagnostic(`3 members Available ${Date.now() - started} ms after create`);
  const status = up.status;
  assert.ok(status);
  assert.equal(status.currentVersion, version);
  assert.equal(status.serviceName, 'example-client');
  assert.ok(status.leader && memberSet(up).includes(status.leader), 'a ready member leads');
  const pdb = (await transport.call('GET', `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/example`)) as { spec?: { minAvailable?: number } };
  assert.equal(pdb.spec?.minAvailable, 2);

  const clientIP = (await core.readNamespacedService({ name: 'example-client', namespace })).spec?.clusterIP;
  const endpoint = `http://${clientIP ?? ''}:2379`;
  // kube-proxy follows endpoint changes about a second late: right after a bootstrap or a removal a
  // connection can meet no endpoint or a deleted pod, so the client retries, as etcd clients do.
  await eventually('a write through the client Service', 30_000, async () => {
    await etcdPut(endpoint, 'survives', 'everything');
    return true;
  });
  const readThroughService = (): Promise<string> => eventually('a read through the client Service', 30_000, () => etcdGet(endpoint, 'survives'));

  started = Date.now();
  await transport.call('PATCH', `${path}/example`, { spec: { size: 5 } }, 'application/merge-patch+json');
  await eventually('5 members', 120_000, settled(5));
  t.diagnostic(`scaled 3→5 in ${Date.now() - started} ms`);
  started = Date.now();
  await transport.call('PATCH', `${path}/example`, { spec: { size: 3 } }, 'application/merge-patch+json');
  const down = await eventually('3 members again', 120_000, settled(3));
  t.diagnostic(`scaled 5→3 in ${Date.now() - started} ms`);
  assert.equal(await readThroughService(), 'everything');

  const victim = memberSet(down)[0] ?? '';
  started = Date.now();
  await core.deleteNamespacedPod({ name: victim, namespace });
  const healed = await eventually('the lost member replaced', 120_000, async () => {
    const c = await settled(3)();
    return c && !memberSet(c).includes(victim) ? c : undefined;
  });
  t.diagnostic(`member replaced ${Date.now() - started} ms after its pod was deleted`);
  assert.equal(memberSet(healed).filter((m) => memberSet(down).includes(m)).length, 2, 'the two survivors stayed');
  assert.equal(await readThroughService(), 'everything');

  const events = (await core.listNamespacedEvent({ namespace })).items.filter((e) => e.involvedObject.kind === 'EtcdCluster');
  for (const reason of ['Bootstrap', 'AddMember', 'PromoteLearner', 'RemoveMember']) {
    assert.ok(events.some((e) => e.reason === reason), `an event for ${reason}`);
  }

  await transport.call('DELETE', `${path}/example`);
  await eventually('everything the cluster owned collected', 90_000, async () => {
    const pods = await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=example' });
    const services = await core.listNamespacedService({ namespace, labelSelector: 'etcd_cluster=example' });
    return pods.items.length === 0 && services.items.length === 0 ? true : undefined;
  });
  finished = true;
});

test('a paused EtcdCluster is left alone, and says so', async (t) => {
  const kc = adminKubeConfig();
  const core = kc.makeApiClient(CoreV1Api);
  const transport = new ApiTransport(kc);
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const namespace = await testNamespace(t, 'paused');
  startOperator(t, namespace);
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`;
  await transport.call('POST', path, { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name: 'held' }, spec: { size: 1, paused: true } });
  const held = await eventually('status Paused', 30_000, async () => {
    const c = (await transport.call('GET', `${path}/held`)) as EtcdCluster;
    return c.status?.phase === 'Paused' ? c : undefined;
  });
  assert.equal(held.status?.controlPaused, true);
  await new Promise((r) => setTimeout(r, 3000));
  assert.equal((await core.listNamespacedPod({ namespace })).items.length, 0, 'no member created while paused');

  await transport.call('PATCH', `${path}/held`, { spec: { paused: false } }, 'application/merge-patch+json');
  await eventually('one member once unpaused', 90_000, async () => {
    const c = (await transport.call('GET', `${path}/held`)) as EtcdCluster;
    return c.status?.phase === 'Running' && c.status.readyMembers === 1 ? true : undefined;
  });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { eventually, lab } from '../support/lab.js';
import { isReady, ON_VOLUMES, testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { etcdGet, etcdGetPrefix, etcdPut } from '../support/etcd-gateway.js';
import { EtcdClient, memberName } from '../../src/etcd/client.js';
import { clientUrl } from '../../src/etcd/identity.js';
import { labLookup } from '../support/lab-dns.js';
import { readFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { loadedCluster } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';

const exampleManifest = fileURLToPath(new URL('../../../examples/etcd-cluster.yaml', import.meta.url));

test('EtcdCluster end to end: the CoreOS manifest applied with kubectl comes up; 1,000 keys survive scale 3→5→3 and a lost member; delete', async (t) => {
  const { core, transport, namespace, path } = await testbed(t, 'e2e');
  const operator = startOperator(t, namespace);
  const get = async (): Promise<EtcdCluster> => (await transport.call('GET', `${path}/example`)) as EtcdCluster;
  const settled = (size: number) => async (): Promise<EtcdCluster | undefined> => {
    const c = await get();
    const available = c.status?.conditions?.find((x) => x.type === 'Available')?.status === 'True';
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=example' })).items.filter((p) => !p.metadata?.deletionTimestamp);
    return available && c.status?.size === size && c.status.readyMembers === size && c.status.phase === 'Running'
      && pods.length === size && pods.every(isReady) ? c : undefined;
  };
  const memberSet = (c: EtcdCluster): string[] => [...(c.status?.members?.ready ?? [])].sort();
  const etcd = new EtcdClient({ lookup: labLookup() });
  /** etcd's member list names exactly the cluster's live pods, and every key written is there. */
  const consistent = async (what: string): Promise<void> => {
    const pods = (await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=example' })).items
      .filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name ?? '').sort();
    const members = (await etcd.memberList(clientUrl({ cluster: 'example', namespace, domain: lab().clusterDomain, tls: false }, pods[0] ?? '')))
      .map(memberName).sort();
    assert.deepEqual(members, pods, `${what}: member list matches the pods`);
    const keys = await eventually(`${what}: keys readable`, 30_000, () => etcdGetPrefix(endpoint, 'key-'));
    assert.equal(keys.size, 1000, `${what}: all 1,000 keys readable`);
    for (let i = 0; i < 1000; i += 97) assert.equal(keys.get(`key-${i}`), `value-${i}`);
  };

  const kubectl = (args: string[], input?: string): string =>
    execFileSync(lab().kubectl, ['--kubeconfig', lab().kubeconfig, '-n', namespace, ...args], { encoding: 'utf8', timeout: 30_000, input });
  // The manifest exactly as written for the CoreOS operator, only placed in this test's namespace.
  const coreosManifest = readFileSync(exampleManifest, 'utf8').replace('namespace: default', `namespace: ${namespace}`);
  let started = Date.now();
  kubectl(['apply', '-f', '-'], coreosManifest);
  const up = await eventually('3 members Available', 120_000, settled(3));
  t.diagnostic(`3 members Available ${Date.now() - started} ms after create`);
  const status = up.status;
  assert.ok(status);
  assert.equal(status.currentVersion, '3.5.35', 'the version the manifest names');
  assert.equal(status.serviceName, 'example-client');
  assert.ok(status.leader && memberSet(up).includes(status.leader), 'a ready member leads');
  const pdb = (await transport.call('GET', `/apis/policy/v1/namespaces/${namespace}/poddisruptionbudgets/example`)) as { spec?: { minAvailable?: number; unhealthyPodEvictionPolicy?: string }; status?: { disruptionsAllowed?: number } };
  assert.deepEqual([pdb.spec?.minAvailable, pdb.spec?.unhealthyPodEvictionPolicy], [4, 'IfHealthyBudget'], 'no member is evicted: the operator moves members off drained nodes');
  assert.equal(pdb.status?.disruptionsAllowed ?? 0, 0);

  const clientIP = (await core.readNamespacedService({ name: 'example-client', namespace })).spec?.clusterIP;
  const endpoint = `http://${clientIP ?? ''}:2379`;
  // kube-proxy follows endpoint changes about a second late: right after a bootstrap or a removal a
  // connection can meet no endpoint or a deleted pod, so the client retries, as etcd clients do.
  await eventually('a write through the client Service', 30_000, async () => {
    await etcdPut(endpoint, 'survives', 'everything');
    return true;
  });
  for (let i = 0; i < 1000; i++) await etcdPut(endpoint, `key-${i}`, `value-${i}`);
  await consistent('after bootstrap');
  const readThroughService = (): Promise<string> => eventually('a read through the client Service', 30_000, () => etcdGet(endpoint, 'survives'));

  started = Date.now();
  await transport.call('PATCH', `${path}/example`, { spec: { size: 5 } }, 'application/merge-patch+json');
  await eventually('5 members', 120_000, settled(5));
  t.diagnostic(`scaled 3→5 in ${Date.now() - started} ms`);
  await consistent('after scaling to 5 through the spec');
  started = Date.now();
  kubectl(['scale', 'etcd/example', '--replicas=3']);
  const down = await eventually('3 members again', 120_000, settled(3));
  t.diagnostic(`scaled 5→3 in ${Date.now() - started} ms`);
  await consistent('after kubectl scale to 3');
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
  await consistent('after replacing a lost member');
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
  operator.succeeded();
});

test('a paused EtcdCluster is left alone, and says so', async (t) => {
  const { core, transport, namespace, path } = await testbed(t, 'paused');
  const operator = startOperator(t, namespace);
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
  operator.succeeded();
});

test('a 7-member cluster comes up Available and serves through its client Service', async (t) => {
  const { core, transport, namespace, path } = await testbed(t, 'seven');
  const operator = startOperator(t, namespace);
  const started = Date.now();
  await transport.call('POST', path, { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name: 'big' }, spec: { size: 7 } });
  const up = await eventually('7 members Available', 180_000, async () => {
    const c = (await transport.call('GET', `${path}/big`)) as EtcdCluster;
    const available = c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True');
    return available && c.status?.readyMembers === 7 && c.status.size === 7 ? c : undefined;
  });
  t.diagnostic(`7 members Available ${Date.now() - started} ms after create`);
  assert.equal(up.status?.members?.ready?.length, 7);
  const ip = (await core.readNamespacedService({ name: 'big-client', namespace })).spec?.clusterIP ?? '';
  await eventually('put through the client Service', 30_000, async () => {
    await etcdPut(`http://${ip}:2379`, 'seven', 'members');
    return true;
  });
  assert.equal(await etcdGet(`http://${ip}:2379`, 'seven'), 'members');
  operator.succeeded();
});

test('the operator killed in the middle of a scale-up under a recorded load resumes: right size, no orphan member or pod, the clients\' history linearizable', async (t) => {
  const bed = await testbed(t, 'crash');
  const { core, transport, namespace, path } = bed;
  const address = { cluster: 'crash', namespace, domain: lab().clusterDomain, tls: false };
  const etcd = new EtcdClient({ lookup: labLookup() });
  const pods = async (): Promise<string[]> => (await core.listNamespacedPod({ namespace, labelSelector: 'etcd_cluster=crash' })).items
    .filter((p) => !p.metadata?.deletionTimestamp).map((p) => p.metadata?.name ?? '').sort();

  const first = startOperator(t, namespace);
  const { load } = await loadedCluster(bed, 'crash', { size: 3 }, 120_000, { recorded: true });
  const [anyPod] = await pods();
  await transport.call('PATCH', `${path}/crash`, { spec: { size: 4 } }, 'application/merge-patch+json');
  // Kill it as soon as etcd lists a fourth member whose pod is not ready yet.
  await eventually('a member added but not ready', 30_000, async () => {
    const members = await etcd.memberList(clientUrl(address, anyPod ?? ''));
    return members.length === 4 ? true : undefined;
  });
  await first.kill();
  const second = startOperator(t, namespace);
  await eventually('4 members after the restart', 120_000, async () => {
    const c = (await transport.call('GET', `${path}/crash`)) as EtcdCluster;
    return c.status?.readyMembers === 4 && c.status.size === 4 && c.status.phase === 'Running' ? true : undefined;
  });
  const members = (await etcd.memberList(clientUrl(address, anyPod ?? ''))).map(memberName).sort();
  assert.deepEqual(members, await pods(), 'no orphan member, no orphan pod');
  assert.equal(members.length, 4);
  assert.ok(second.logs.some((l) => l.includes('caches synced')));
  checkLoad(t, 'operator killed mid scale-up', await load.finish());
  first.succeeded();
  second.succeeded();
});

test('with a PVC, a deleted member pod comes back under the same name with its data, not replaced', async (t) => {
  const bed = await testbed(t, 'pvc');
  const { core, transport, namespace, path } = bed;
  const operator = startOperator(t, namespace);
  await bed.create('kept', { size: 3, pod: ON_VOLUMES });
  const running = async (): Promise<EtcdCluster | undefined> => {
    const c = (await transport.call('GET', `${path}/kept`)) as EtcdCluster;
    return c.status?.readyMembers === 3 && c.status.phase === 'Running' ? c : undefined;
  };
  const before = await eventually('3 members on volumes', 120_000, running);
  const address = { cluster: 'kept', namespace, domain: lab().clusterDomain, tls: false };
  const etcd = new EtcdClient({ lookup: labLookup() });
  const victim = before.status?.members?.ready?.[0] ?? '';
  const survivor = before.status?.members?.ready?.[1] ?? '';
  const idsBefore = (await etcd.memberList(clientUrl(address, survivor))).map((m) => m.id).sort();
  const claims = await core.listNamespacedPersistentVolumeClaim({ namespace });
  assert.equal(claims.items.filter((c) => c.status?.phase === 'Bound').length, 3, 'each member on its own bound claim');
  await eventually('a key written on the victim', 30_000, async () => {
    await etcdPut(clientUrl(address, victim), 'on-disk', 'kept', labLookup());
    return true;
  });

  const oldUid = (await core.readNamespacedPod({ name: victim, namespace })).metadata?.uid;
  await core.deleteNamespacedPod({ name: victim, namespace });
  await eventually('the same member back, ready', 120_000, async () => {
    const pod = await core.readNamespacedPod({ name: victim, namespace }).catch(() => undefined);
    const ready = pod?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True');
    return pod && pod.metadata?.uid !== oldUid && ready ? true : undefined;
  });
  await eventually('3 members Running', 60_000, running);
  const idsAfter = (await etcd.memberList(clientUrl(address, survivor))).map((m) => m.id).sort();
  assert.deepEqual(idsAfter, idsBefore, 'no member was removed or added');
  assert.equal(await etcdGet(clientUrl(address, victim), 'on-disk', labLookup()), 'kept', 'the member serves with its data');
  const events = (await core.listNamespacedEvent({ namespace })).items;
  assert.ok(!events.some((e) => e.reason === 'RemoveMember'), 'no replacement');
  operator.succeeded();
});

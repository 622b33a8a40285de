import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import { EtcdClient, memberName } from '../../src/etcd/client.js';
import { clientUrl, initialCluster, peerUrl } from '../../src/etcd/identity.js';
import type { ClusterAddress } from '../../src/etcd/identity.js';
import { memberPod } from '../../src/k8s/member-pod.js';
import { peerService } from '../../src/k8s/services.js';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { ClusterSpec, EtcdCluster } from '../../src/api/etcd-cluster.js';
import { etcdClusterCrd } from '../../src/api/crds.js';
import { ApiTransport } from '../../src/runtime/transport.js';
import { ensureCrd } from '../support/test-crd.js';
import { adminKubeConfig, eventually, lab, testNamespace } from '../support/lab.js';
import { labLookup } from '../support/lab-dns.js';

test('the etcd client drives real members: list, learner add, promote, leadership transfer, remove', async (t) => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const namespace = await testNamespace(t, 'etcdapi');
  const address: ClusterAddress = { cluster: 'pair', namespace, domain: lab().clusterDomain, tls: false };
  const version = (lab().etcdImages[0] ?? '').split(':v')[1] ?? '';
  const spec: ClusterSpec = { size: 2, repository: 'quay.io/coreos/etcd', version };
  // The owner the pods and Service point at (no operator runs here, so nothing acts on it).
  const transport = new ApiTransport(kubeConfigCredentials(adminKubeConfig()));
  t.after(() => { transport.agent.destroy(); });
  await ensureCrd(transport, etcdClusterCrd());
  const owner = (await transport.call('POST', `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`, {
    apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name: 'pair' }, spec,
  })) as EtcdCluster;
  const uid = owner.metadata.uid ?? '';
  await core.createNamespacedService({ namespace, body: peerService(address, uid) });
  const createMember = async (member: string, state: 'new' | 'existing', members: string[]): Promise<void> => {
    const body = memberPod({ address, clusterUid: uid, spec, specGeneration: 1, member, version, state, initialCluster: initialCluster(address, members), token: uid, withClaim: false, operator: { image: 'etcd-operator:dev', corruptCheckSeconds: 600 }, expectData: false });
    await core.createNamespacedPod({ namespace, body });
  };
  // etcd's own health: no operator runs here to open the member pods' voter gate, so they are never Ready.
  const ready = (name: string) => async (): Promise<true | undefined> => {
    const p = await core.readNamespacedPod({ name, namespace });
    return p.status?.conditions?.some((c) => c.type === 'ContainersReady' && c.status === 'True') ? true : undefined;
  };

  const etcd = new EtcdClient({ lookup: labLookup() });
  const first = clientUrl(address, 'pair-a');
  await createMember('pair-a', 'new', ['pair-a']);
  await eventually('pair-a Ready', 90_000, ready('pair-a'));
  const [only] = await etcd.memberList(first);
  assert.ok(only);
  assert.equal(memberName(only), 'pair-a');

  const learner = await etcd.memberAdd(first, peerUrl(address, 'pair-b'), true);
  assert.equal(learner.isLearner, true);
  assert.equal(memberName(learner), 'pair-b', 'an unstarted member is named by its peer URL');
  await createMember('pair-b', 'existing', ['pair-a', 'pair-b']);
  const second = clientUrl(address, 'pair-b');
  // "not in sync with leader" until the learner has caught up: retry within a bound.
  await eventually('learner promoted', 60_000, async () => {
    await etcd.memberPromote(first, learner.id);
    return true;
  });
  const members = await etcd.memberList(first);
  assert.deepEqual(members.map((m) => [memberName(m), m.isLearner]).sort(), [['pair-a', false], ['pair-b', false]]);
  // Its name resolves once CoreDNS has seen its pod's address (a watch behind, under load).
  await eventually('pair-b Ready', 90_000, ready('pair-b'));
  const confirmed = await eventually('pair-b answering by its name', 30_000, () => etcd.memberList(second, true));
  assert.deepEqual(confirmed, members, 'a linearizable list, confirmed with the leader, is the same');

  // Both hold the same data: the same hash at the same revision.
  const revision = (await etcd.status(first)).revision;
  const hash = await eventually('both members at the revision', 10_000, async () => {
    const [a, b] = [await etcd.hashKV(first, revision), await etcd.hashKV(second, revision)];
    return a.hash === b.hash ? a : undefined;
  });
  assert.ok(hash.hash !== 0 && hash.hashRevision === revision, 'a real hash of that revision');
  const before = await etcd.status(first);
  assert.equal(before.leaderId, before.memberId, 'the first member leads');
  await etcd.moveLeader(first, learner.id);
  const after = await eventually('leadership moved', 10_000, async () => {
    const s = await etcd.status(second);
    return s.leaderId === learner.id ? s : undefined;
  });
  assert.ok(after.raftIndex > 0);
  assert.ok(after.dbSize > 0);
  assert.match(after.version, /^3\.\d+\.\d+$/);

  // The new leader refuses reconfiguration ("unhealthy cluster") until it has been connected to every
  // member for etcd's health interval (~5 s).
  await eventually('first member removed', 30_000, async () => {
    await etcd.memberRemove(second, before.memberId);
    return true;
  });
  const left = await etcd.memberList(second);
  assert.deepEqual(left.map(memberName), ['pair-b']);
  await assert.rejects(etcd.memberRemove(second, before.memberId), /member not found/);
});

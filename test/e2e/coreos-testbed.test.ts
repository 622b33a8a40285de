import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually } from '../support/lab.js';
import { isReady, testbed } from '../support/cluster-testbed.js';
import { deployCoreOSOperator, publishNotReadyPeers } from '../support/coreos-operator.js';
import { etcdGet, etcdPut, post } from '../support/etcd-gateway.js';

const CLUSTER = 'coreos';

/**
 * The test bed of the adoption work (issue 33): the archived CoreOS operator, run on the lab against our CRDs,
 * makes a cluster that serves, and is stopped leaving its members running, for our operator to take over.
 */
test('CoreOS test bed: the CoreOS operator v0.9.4 makes a 3-member cluster that serves reads and writes, and stops leaving it running', async (t) => {
  const bed = await testbed(t, 'coreos');
  const operator = await deployCoreOSOperator(t, bed);
  const { images } = operator;
  const version = images.etcdVersions.includes('3.5.35') ? '3.5.35' : images.etcdVersions[0] ?? '';

  const started = Date.now();
  const peersPublished = publishNotReadyPeers(bed, CLUSTER);
  const spec = { size: 3, version, repository: images.etcdRepository, pod: { busyboxImage: images.busyboxImage } };
  const created = await bed.create(CLUSTER, spec);
  t.diagnostic(`peer Service published its unready addresses ${await peersPublished} ms after the create`);

  const livePods = async (): Promise<V1Pod[]> => (await bed.pods(CLUSTER)).filter((p) => p.status?.phase === 'Running');
  const members = await eventually('3 CoreOS members Ready', 300_000, async () => {
    const pods = await livePods();
    return pods.length === 3 && pods.every(isReady) ? pods : undefined;
  }).catch((err: unknown) => { throw new Error(`${String(err)}; CoreOS operator log: ${operator.log.slice(-30).join(' | ')}`); });
  t.diagnostic(`3 CoreOS members Ready ${Date.now() - started} ms after the create`);

  const endpoint = await bed.clientEndpoint(CLUSTER);
  // kube-proxy follows the client Service's endpoints about a second late: retry the first write.
  await eventually('a write through the client Service', 60_000, async () => {
    await etcdPut(endpoint, 'coreos-testbed', 'written by a client of the CoreOS cluster');
    return true;
  });
  assert.equal(await etcdGet(endpoint, 'coreos-testbed'), 'written by a client of the CoreOS cluster');
  t.diagnostic(`serving reads and writes ${Date.now() - started} ms after the create`);

  const memberList = async (): Promise<string[]> =>
    (((await post(endpoint, '/v3/cluster/member/list', {})) as { members?: { name?: string }[] }).members ?? []).map((m) => m.name ?? '').sort();
  const podNames = members.map((p) => p.metadata?.name ?? '').sort();
  assert.deepEqual(await memberList(), podNames, 'etcd\'s members are the CoreOS pods, all started');
  for (const p of members) {
    const { containers, initContainers } = p.spec ?? { containers: [] };
    assert.equal(containers[0]?.image, `${images.etcdRepository}:v${version}`);
    assert.deepEqual(initContainers?.map((c) => [c.name, c.image]), [['check-dns', images.busyboxImage]]);
  }

  // What the CoreOS operator made of our EtcdCluster: the stored spec (it PUTs the whole object) and status.
  const stored = await bed.get(CLUSTER);
  t.diagnostic(`spec as created: ${JSON.stringify(created.spec)}`);
  t.diagnostic(`spec as stored after the CoreOS operator (generation ${created.metadata.generation ?? '?'} → ${stored.metadata.generation ?? '?'}): ${JSON.stringify(stored.spec)}`);
  t.diagnostic(`status as stored after the CoreOS operator: ${JSON.stringify(stored.status ?? null)}`);
  const troubles = operator.log.filter((l) => /level=(warning|error|fatal)/.test(l));
  t.diagnostic(`CoreOS operator log: ${operator.log.length} lines, ${troubles.length} warnings or errors${troubles.length ? `: ${troubles.slice(0, 10).join(' | ')}` : ''}`);
  const refusals = operator.refusals();
  t.diagnostic(refusals.length === 0 ? 'the CoreOS operator\'s log tells of no refused request'
    : `requests of the CoreOS operator refused (${refusals.length}): ${refusals.slice(0, 10).join(' | ')}`);

  const stopping = Date.now();
  await operator.stop();
  t.diagnostic(`CoreOS operator stopped in ${Date.now() - stopping} ms`);
  const afterStop = operator.refusals().slice(refusals.length);
  if (afterStop.length > 0) t.diagnostic(`refused while stopping: ${afterStop.join(' | ')}`);

  // The members run on without it: the same pods, Ready, serving.
  await new Promise((r) => setTimeout(r, 3000));
  const still = await livePods();
  assert.deepEqual(still.map((p) => p.metadata?.uid).sort(), members.map((p) => p.metadata?.uid).sort(), 'the same member pods run');
  assert.ok(still.every(isReady), 'every member is still Ready');
  await etcdPut(endpoint, 'after-stop', 'the members serve without their operator');
  assert.equal(await etcdGet(endpoint, 'after-stop'), 'the members serve without their operator');
  assert.equal(await etcdGet(endpoint, 'coreos-testbed'), 'written by a client of the CoreOS cluster');
  assert.deepEqual(await memberList(), podNames);
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Container } from '@kubernetes/client-node';
import { adminKubeConfig, eventually, lab, testNamespace } from '../support/lab.js';
import { labLookup } from '../support/lab-dns.js';
import { etcdGet, etcdPut } from '../support/etcd-gateway.js';
import { ETCD_BIN, etcdServerPod, finishedPod, podLog, readyPod } from '../support/lab-pods.js';

test('the lab has (at least) three Ready nodes in three zones, each with its own address', async () => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const nodes = (await core.listNode()).items;
  assert.deepEqual(nodes.map((n) => n.metadata?.name).sort(), lab().nodes.map((n) => n.name).sort());
  assert.ok(nodes.length >= 3, `three nodes or more (ETCD_OPERATOR_LAB_NODES; default 3), not ${nodes.length}`);
  for (const node of nodes) {
    const facts = lab().nodes.find((n) => n.name === node.metadata?.name);
    assert.ok(facts);
    const labels = node.metadata?.labels ?? {};
    assert.equal(node.status?.conditions?.find((c) => c.type === 'Ready')?.status, 'True', `${facts.name} Ready`);
    assert.equal(labels['topology.kubernetes.io/zone'], facts.zone);
    assert.equal(labels['kubernetes.io/hostname'], facts.name);
    assert.equal(node.status.addresses?.find((a) => a.type === 'InternalIP')?.address, facts.ip);
  }
  assert.deepEqual(new Set(nodes.map((n) => n.metadata?.labels?.['topology.kubernetes.io/zone'])), new Set(['zone-a', 'zone-b', 'zone-c']));
});

test('from a pod on every node, etcd in a pod on one node is written and read by its DNS name and through a ClusterIP Service', async (t) => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const namespace = await testNamespace(t, 'lab');
  const serverNode = lab().nodes[0];
  assert.ok(serverNode);
  await core.createNamespacedService({ namespace, body: {
    metadata: { name: 'etcd' },
    spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: { app: 'lab-etcd' }, ports: [{ name: 'client', port: 2379 }] },
  } });
  const client = await core.createNamespacedService({ namespace, body: {
    metadata: { name: 'etcd-client' }, spec: { selector: { app: 'lab-etcd' }, ports: [{ port: 2379 }] },
  } });
  assert.ok(client.spec?.clusterIP && client.spec.clusterIP !== 'None', 'a ClusterIP was allocated');
  const server = etcdServerPod('etcd-0', serverNode.name);
  server.metadata = { name: 'etcd-0', labels: { app: 'lab-etcd' } };
  Object.assign(server.spec ?? {}, { hostname: 'etcd-0', subdomain: 'etcd' });
  const running = await readyPod(core, namespace, server);
  assert.equal(running.spec?.nodeName, serverNode.name);

  const byName = `http://etcd-0.etcd.${namespace}.svc.${lab().clusterDomain}:2379`;
  const byService = `http://etcd-client.${namespace}.svc.${lab().clusterDomain}:2379`;
  const etcdctl = (name: string, endpoint: string, ...args: string[]): V1Container => ({
    name, image: lab().etcdImages[0], command: [`${ETCD_BIN}/etcdctl`, `--endpoints=${endpoint}`, ...args],
  });
  // One client pod per node. Steps in order: init containers run one after the other; the two readers run last.
  for (const node of lab().nodes) {
    await core.createNamespacedPod({ namespace, body: {
      metadata: { name: `client-${node.name}` },
      spec: {
        nodeSelector: { 'kubernetes.io/hostname': node.name },
        restartPolicy: 'Never',
        initContainers: [
          etcdctl('put-by-name', byName, 'put', `${node.name}/by-name`, 'written-by-pod-dns'),
          etcdctl('put-by-service', byService, 'put', `${node.name}/by-service`, 'written-through-clusterip'),
        ],
        containers: [
          etcdctl('get-by-name', byName, 'get', '--prefix', `${node.name}/`),
          etcdctl('get-by-service', byService, 'get', '--prefix', `${node.name}/`),
        ],
      },
    } });
  }
  for (const node of lab().nodes) {
    const name = `client-${node.name}`;
    const done = await finishedPod(core, namespace, name);
    assert.equal(done.spec?.nodeName, node.name);
    const expected = `${node.name}/by-name\nwritten-by-pod-dns\n${node.name}/by-service\nwritten-through-clusterip\n`;
    assert.equal(await podLog(core, namespace, name, 'get-by-name'), expected);
    assert.equal(await podLog(core, namespace, name, 'get-by-service'), expected);
  }

  // And from this process, on the host: by DNS name through the lab's resolver, and through the ClusterIP.
  const lookup = labLookup();
  const other = lab().nodes[1]?.name ?? '';
  assert.equal(await etcdGet(byName, `${other}/by-service`, lookup), 'written-through-clusterip');
  assert.equal(await eventually('the key through the ClusterIP', 30_000, () => etcdGet(`http://${client.spec?.clusterIP ?? ''}:2379`, `${other}/by-name`)),
    'written-by-pod-dns');
  await etcdPut(byName, 'from-host', 'yes', lookup);
  assert.equal(await etcdGet(byService, 'from-host', lookup), 'yes');
});

test('the API server enforces RBAC: a service account with no rights cannot list pods', async (t) => {
  const admin = adminKubeConfig();
  const core = admin.makeApiClient(CoreV1Api);
  const namespace = await testNamespace(t, 'rbac');
  await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'nobody' } } });
  const token = await core.createNamespacedServiceAccountToken({
    name: 'nobody', namespace, body: { spec: { audiences: [], expirationSeconds: 600 } },
  });
  assert.ok(token.status?.token, 'the TokenRequest API returned a token');

  const cluster = admin.getCurrentCluster();
  assert.ok(cluster);
  const asNobody = new KubeConfig();
  asNobody.loadFromOptions({
    clusters: [cluster],
    users: [{ name: 'nobody', token: token.status.token }],
    contexts: [{ name: 'nobody', cluster: cluster.name, user: 'nobody' }],
    currentContext: 'nobody',
  });
  const refused = await asNobody.makeApiClient(CoreV1Api).listNamespacedPod({ namespace }).then(
    () => undefined,
    (err: unknown) => err,
  );
  assert.ok(refused instanceof ApiException, `expected an API refusal, got ${String(refused)}`);
  assert.equal(refused.code, 403);
  const status = JSON.parse(String(refused.body)) as { reason?: string; message?: string };
  assert.equal(status.reason, 'Forbidden');
  assert.match(status.message ?? '', new RegExp(`User "system:serviceaccount:${namespace}:nobody" cannot list resource "pods"`));
});

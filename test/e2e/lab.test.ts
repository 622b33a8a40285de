import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ApiException, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { adminKubeConfig, eventually, lab, testNamespace } from '../support/lab.js';
import { labLookup } from '../support/lab-dns.js';
import { etcdGet, etcdPut } from '../support/etcd-gateway.js';

test('the lab has exactly one node, and it is Ready', async () => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const nodes = await core.listNode();
  assert.equal(nodes.items.length, 1);
  const ready = nodes.items[0]?.status?.conditions?.find((c) => c.type === 'Ready');
  assert.equal(ready?.status, 'True');
  assert.equal(nodes.items[0]?.metadata?.name, lab().nodeName);
});

test('an etcd pod from a locally built image serves reads and writes through its DNS name and a ClusterIP Service', async (t) => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const namespace = await testNamespace(t, 'lab');
  const image = lab().etcdImages[0];
  assert.ok(image, 'the lab lists at least one etcd image');
  const peerName = `etcd-0.etcd.${namespace}.svc.${lab().clusterDomain}`;
  const service: V1Service = {
    metadata: { name: 'etcd' },
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { app: 'lab-etcd' },
      ports: [{ name: 'client', port: 2379 }, { name: 'peer', port: 2380 }],
    },
  };
  const pod: V1Pod = {
    metadata: { name: 'etcd-0', labels: { app: 'lab-etcd' } },
    spec: {
      hostname: 'etcd-0',
      subdomain: 'etcd',
      containers: [{
        name: 'etcd',
        image,
        command: [
          '/usr/local/bin/etcd', '--name=etcd-0', '--data-dir=/var/lib/etcd/data',
          '--listen-client-urls=http://0.0.0.0:2379', `--advertise-client-urls=http://${peerName}:2379`,
          '--listen-peer-urls=http://0.0.0.0:2380', `--initial-advertise-peer-urls=http://${peerName}:2380`,
          `--initial-cluster=etcd-0=http://${peerName}:2380`,
        ],
        readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 },
      }],
    },
  };
  await core.createNamespacedService({ namespace, body: service });
  await core.createNamespacedPod({ namespace, body: pod });

  await eventually('etcd pod Ready', 90_000, async () => {
    const p = await core.readNamespacedPod({ name: 'etcd-0', namespace });
    return p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? p : undefined;
  });

  const endpoint = `http://${peerName}:2379`;
  const lookup = labLookup();
  await etcdPut(endpoint, 'lab-key', 'written-from-the-test-process', lookup);
  assert.equal(await etcdGet(endpoint, 'lab-key', lookup), 'written-from-the-test-process');

  // The same member through a ClusterIP Service: kube-proxy's rules carry the traffic.
  const client = await core.createNamespacedService({
    namespace,
    body: { metadata: { name: 'etcd-client' }, spec: { selector: { app: 'lab-etcd' }, ports: [{ port: 2379 }] } },
  });
  const clusterIP = client.spec?.clusterIP;
  assert.ok(clusterIP && clusterIP !== 'None', 'a ClusterIP was allocated');
  const byServiceName = `http://etcd-client.${namespace}.svc.${lab().clusterDomain}:2379`;
  assert.equal(await eventually('the key through the ClusterIP', 30_000, () => etcdGet(`http://${clusterIP}:2379`, 'lab-key')),
    'written-from-the-test-process');
  assert.equal(await etcdGet(byServiceName, 'lab-key', lookup), 'written-from-the-test-process');
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

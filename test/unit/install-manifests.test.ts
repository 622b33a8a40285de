import { test } from 'node:test';
import assert from 'node:assert/strict';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_INSTALL, installManifests, operatorObjects } from '../../src/install/manifests.js';
import { LEASE_RULES, NODE_RULES, OPERATOR_RULES } from '../../src/install/rbac.js';

const kinds = (o: Parameters<typeof operatorObjects>[0]): string[] => operatorObjects(o).map((x) => x.kind ?? '');

test('RBAC names every verb and resource: no wildcards, nothing cluster-scoped, no escalation', () => {
  for (const rule of [...OPERATOR_RULES, ...LEASE_RULES]) {
    assert.ok(!rule.verbs.includes('*') && !rule.resources.includes('*') && !rule.apiGroups.includes('*'), JSON.stringify(rule));
    for (const r of ['nodes', 'namespaces', 'persistentvolumes', 'clusterroles', 'roles', 'rolebindings', 'customresourcedefinitions', 'pods/exec']) {
      assert.ok(!rule.resources.includes(r), `${r} is not the operator's business`);
    }
    assert.ok(!rule.verbs.some((v) => ['escalate', 'bind', 'impersonate'].includes(v)));
  }
});

test('namespaced mode: a Role with the operator and lease rules in its namespace; cluster-wide, only nodes and volumes read, named after the namespace', () => {
  const objects = operatorObjects({ ...DEFAULT_INSTALL, namespace: 'etcd' });
  assert.deepEqual(objects.map((x) => x.kind), ['Namespace', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'Deployment']);
  const role = objects.find((x) => x.kind === 'Role') as { rules: unknown[]; metadata: { namespace: string } };
  assert.deepEqual(role.rules, [...OPERATOR_RULES, ...LEASE_RULES]);
  assert.equal(role.metadata.namespace, 'etcd');
  const nodes = objects.find((x) => x.kind === 'ClusterRole') as { rules: { verbs: string[] }[]; metadata: { name: string } };
  assert.deepEqual(nodes.rules, NODE_RULES);
  assert.ok(nodes.rules.flatMap((r) => r.verbs).every((v) => ['get', 'list', 'watch'].includes(v)), 'read-only');
  assert.equal(nodes.metadata.name, 'etcd-operator-nodes-etcd');
  assert.ok(!kinds({ ...DEFAULT_INSTALL }).includes('Namespace'), 'the default namespace is not declared');
});

test('cluster-wide mode: a ClusterRole for the operator rules, leases still a Role of its own namespace', () => {
  const objects = operatorObjects({ ...DEFAULT_INSTALL, namespace: 'etcd', clusterWide: true });
  assert.deepEqual(objects.map((x) => x.kind), ['Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Role', 'RoleBinding', 'Deployment']);
  assert.deepEqual((objects.find((x) => x.kind === 'ClusterRole') as { rules: unknown[] }).rules, [...OPERATOR_RULES, ...NODE_RULES]);
  assert.deepEqual((objects.find((x) => x.kind === 'Role') as { rules: unknown[] }).rules, LEASE_RULES);
  const deployment = objects.find((x) => x.kind === 'Deployment') as { spec: { template: { spec: { containers: { args: string[] }[] } } } };
  const args = deployment.spec.template.spec.containers[0]?.args ?? [];
  assert.ok(args.includes('--cluster-wide') && !args.some((a) => a.startsWith('--namespace')));
});

test('the Deployment: two leader-elected replicas spread over nodes and evicted 30 s after their node is gone, non-root, read-only root, no capabilities, probes on the metrics port', () => {
  const d = operatorObjects({ ...DEFAULT_INSTALL, namespace: 'ops', image: 'reg/op:1', logLevel: 'debug', metricsPort: 9000 }).find((x) => x.kind === 'Deployment') as {
    spec: { replicas: number; template: { spec: { serviceAccountName: string; securityContext: Record<string, unknown>; containers: Record<string, unknown>[] } } };
  };
  const pod = d.spec.template.spec;
  const c = pod.containers[0] as { image: string; args: string[]; securityContext: Record<string, unknown>; ports: { containerPort: number }[]; readinessProbe: unknown };
  assert.equal(d.spec.replicas, 2);
  const spec = pod as unknown as { topologySpreadConstraints: { topologyKey: string }[]; tolerations: { key: string; tolerationSeconds: number }[] };
  assert.equal(spec.topologySpreadConstraints[0]?.topologyKey, 'kubernetes.io/hostname');
  assert.deepEqual(spec.tolerations.map((x) => [x.key, x.tolerationSeconds]), [['node.kubernetes.io/not-ready', 30], ['node.kubernetes.io/unreachable', 30]]);
  assert.equal(pod.serviceAccountName, 'etcd-operator');
  assert.equal(pod.securityContext.runAsNonRoot, true);
  assert.deepEqual(c.securityContext, { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
  assert.equal(c.image, 'reg/op:1');
  assert.deepEqual(c.args, ['run', '--namespace=ops', '--leader-elect', '--lease-namespace=ops', '--metrics-address=0.0.0.0:9000', '--log-level=debug', '--image=reg/op:1']);
  assert.equal(c.ports[0]?.containerPort, 9000);
  assert.deepEqual(c.readinessProbe, { httpGet: { path: '/readyz', port: 'metrics' }, periodSeconds: 10 });
});

test('installManifests is one YAML stream: the three CRDs, then the operator objects', () => {
  const docs = parseAllDocuments(installManifests(DEFAULT_INSTALL)).map((d) => d.toJS() as { kind: string; metadata: { name: string } });
  assert.deepEqual(docs.map((d) => d.kind), ['CustomResourceDefinition', 'CustomResourceDefinition', 'CustomResourceDefinition', 'ServiceAccount', 'Role', 'RoleBinding', 'ClusterRole', 'ClusterRoleBinding', 'Deployment']);
  assert.deepEqual(docs.slice(0, 3).map((d) => d.metadata.name), ['etcdclusters.etcd.database.coreos.com', 'etcdbackups.etcd.database.coreos.com', 'etcdrestores.etcd.database.coreos.com']);
});

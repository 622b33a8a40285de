// lab: late — needs Helm, built behind a first lab.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_INSTALL, NAME, installManifests } from '../../src/install/manifests.js';
import { alertRules } from '../../src/install/alert-rules.js';
import { dashboard } from '../../src/install/dashboard.js';
import { metricsService } from '../../src/k8s/services.js';
import type { InstallOptions } from '../../src/install/manifests.js';
import { labTool } from '../support/lab.js';
import { kubectl } from '../support/kubectl.js';

const chart = fileURLToPath(new URL('../../../deploy/helm/etcd-operator', import.meta.url));

interface K8sObject { kind: string; metadata: { name: string; namespace?: string } }
const key = (o: K8sObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;
const objects = (yaml: string): K8sObject[] =>
  parseAllDocuments(yaml).map((d) => d.toJS() as K8sObject | null).filter((o): o is K8sObject => o !== null).sort((a, b) => key(a).localeCompare(key(b)));

const helmTemplate = async (namespace: string, set: string[]): Promise<string> =>
  execFileSync(await labTool('helm'), ['template', 'etcd-operator', chart, '--namespace', namespace, '--include-crds', ...set.flatMap((s) => ['--set', s])], { encoding: 'utf8', timeout: 60_000 });

/** What the generator prints, less the Namespace object: Helm leaves that to `--create-namespace`. */
const generated = (o: InstallOptions): K8sObject[] => objects(installManifests(o)).filter((x) => x.kind !== 'Namespace');

test('helm template renders the same objects as `etcd-operator manifests`, in both modes and with values set', async () => {
  assert.deepEqual(objects(await helmTemplate('default', [])), generated(DEFAULT_INSTALL));
  assert.deepEqual(objects(await helmTemplate('etcd', ['clusterWide=true'])), generated({ ...DEFAULT_INSTALL, namespace: 'etcd', clusterWide: true }));
  const custom = ['image.repository=registry.example/etcd-operator', 'image.tag=1.2.3', 'image.pullPolicy=Always', 'logLevel=debug', 'metricsPort=9090',
    'resources.requests.cpu=250m', 'resources.requests.memory=200Mi', 'resources.limits.memory=400Mi', 'replicas=3', 'allowBackupEndpoints=true'];
  assert.deepEqual(objects(await helmTemplate('ops', custom)), generated({
    ...DEFAULT_INSTALL, namespace: 'ops', image: 'registry.example/etcd-operator:1.2.3', imagePullPolicy: 'Always', logLevel: 'debug', metricsPort: 9090,
    resources: { requests: { cpu: '250m', memory: '200Mi' }, limits: { memory: '400Mi' } }, replicas: 3, allowBackupEndpoints: true,
  }));
});

test('the API server accepts every object the chart renders (server-side dry run)', async () => {
  const out = kubectl(['apply', '--dry-run=server', '-f', '-'], await helmTemplate('default', []));
  assert.match(out, /deployment\.apps\/etcd-operator (created|configured|unchanged) \(server dry run\)/);
  assert.match(out, /role\.rbac\.authorization\.k8s\.io\/etcd-operator (created|configured|unchanged) \(server dry run\)/);
});

test('with monitoring on, the chart renders a ServiceMonitor of every member\'s metrics Service, a PodMonitor of the operator, the shipped rules and dashboard', async () => {
  const set = ['clusterWide=true', 'monitoring.serviceMonitor.enabled=true', 'monitoring.podMonitor.enabled=true', 'monitoring.prometheusRule.enabled=true',
    'monitoring.dashboard.enabled=true', 'monitoring.serviceMonitor.labels.release=kube-prometheus'];
  const all = objects(await helmTemplate('ops', set));
  const find = (kind: string): unknown => {
    const o = all.find((x) => x.kind === kind);
    assert.ok(o, `a ${kind}`);
    return o;
  };
  // The ServiceMonitor selects a metrics Service as the operator makes it, by its labels and its port's name.
  const svc = metricsService({ cluster: 'main', namespace: 'db', domain: 'cluster.local', tls: false }, 'uid');
  const monitor = find('ServiceMonitor') as { metadata: { labels: Record<string, string> }; spec: { selector: { matchLabels: Record<string, string>; matchExpressions: { key: string }[] }; namespaceSelector: { any?: boolean }; endpoints: { port: string; relabelings: { targetLabel: string }[] }[] } };
  assert.equal(monitor.metadata.labels.release, 'kube-prometheus', 'the labels a Prometheus selects monitors by');
  for (const [k, v] of Object.entries(monitor.spec.selector.matchLabels)) assert.equal(svc.metadata?.labels?.[k], v);
  assert.ok(monitor.spec.selector.matchExpressions.every((e) => svc.metadata?.labels?.[e.key] !== undefined));
  assert.equal(monitor.spec.namespaceSelector.any, true, 'cluster-wide: every namespace');
  assert.deepEqual(monitor.spec.endpoints.map((e) => e.port), svc.spec?.ports?.map((p) => p.name));
  assert.deepEqual(monitor.spec.endpoints[0]?.relabelings.map((r) => r.targetLabel), ['etcd_cluster', 'pod']);
  const pods = find('PodMonitor') as { spec: { selector: { matchLabels: Record<string, string> }; podMetricsEndpoints: unknown[] } };
  // Its series keep the clusters' namespaces (honorLabels); its install is told by operator_namespace, as the shipped scrape job does.
  assert.deepEqual(pods.spec.podMetricsEndpoints,
    [{ port: 'metrics', interval: '30s', honorLabels: true, relabelings: [{ sourceLabels: ['__meta_kubernetes_namespace'], targetLabel: 'operator_namespace' }] }]);
  assert.deepEqual(pods.spec.selector.matchLabels, { 'app.kubernetes.io/name': NAME });
  assert.deepEqual((find('PrometheusRule') as { spec: unknown }).spec, alertRules());
  const board = find('ConfigMap') as { metadata: { labels: Record<string, string> }; data: Record<string, string> };
  assert.equal(board.metadata.labels.grafana_dashboard, '1');
  assert.deepEqual(JSON.parse(board.data['etcd-operator.json'] ?? ''), dashboard());
});

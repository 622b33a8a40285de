import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import { DEFAULT_INSTALL, installManifests } from '../../src/install/manifests.js';
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

import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TestContext } from 'node:test';
import { stringify } from 'yaml';
import { DEFAULT_INSTALL, NAME, operatorObjects } from '../../src/install/manifests.js';
import { adminKubeConfig } from './lab.js';
import { kubectl } from './kubectl.js';

/**
 * The operator's ServiceAccount and RBAC in a test's namespace, exactly as `etcd-operator manifests` makes them
 * (namespaced mode), and a kubeconfig that carries that ServiceAccount's token: an operator started with it has
 * those rights and no others; it reaches the API server at `serverUrl` when given (a relay). Removed when the test
 * ends (with the namespace; the cluster-scoped node reader explicitly).
 */
export function operatorKubeconfig(t: TestContext, namespace: string, serverUrl?: string): string {
  const rbac = operatorObjects({ ...DEFAULT_INSTALL, namespace }).filter((o) => o.kind !== 'Namespace' && o.kind !== 'Deployment');
  kubectl(['apply', '-f', '-'], rbac.map((o) => stringify(o)).join('---\n'));
  // The node-reading ClusterRole and its binding are not in the namespace: they go when the test ends.
  const clusterScoped = rbac.filter((o) => o.kind?.startsWith('Cluster')).map((o) => `${o.kind?.toLowerCase() ?? ''}/${o.metadata?.name ?? ''}`);
  t.after(() => { kubectl(['delete', '--ignore-not-found', ...clusterScoped]); });
  const token = kubectl(['-n', namespace, 'create', 'token', NAME, '--duration', '3h']).trim();
  const server = adminKubeConfig().getCurrentCluster();
  if (!server) throw new Error('the admin kubeconfig has no cluster');
  const dir = mkdtempSync(join(tmpdir(), 'operator-identity-'));
  t.after(() => { rmSync(dir, { recursive: true, force: true }); });
  const path = join(dir, 'kubeconfig');
  writeFileSync(path, stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'operator',
    clusters: [{ name: 'lab', cluster: { server: serverUrl ?? server.server, ...(server.caFile ? { 'certificate-authority': server.caFile } : { 'certificate-authority-data': server.caData }) } }],
    users: [{ name: NAME, user: { token } }],
    contexts: [{ name: 'operator', context: { cluster: 'lab', user: NAME, namespace } }],
  }), { mode: 0o600 });
  return path;
}

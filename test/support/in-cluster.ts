import { spawn } from 'node:child_process';
import { owned } from './child-stop.js';
import type { ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import { stringify } from 'yaml';
import type { V1Deployment, V1Pod } from '@kubernetes/client-node';
import { NAME, operatorObjects } from '../../src/install/manifests.js';
import type { InstallOptions } from '../../src/install/manifests.js';
import type { Testbed } from './cluster-testbed.js';
import { kubectl } from './kubectl.js';
import { eventually, lab } from './lab.js';

/** The operator's objects as `etcd-operator manifests` makes them, applied with kubectl (no Namespace: the test made it). */
export function installOperator(o: InstallOptions): void {
  kubectl(['apply', '-f', '-'], operatorObjects(o).filter((x) => x.kind !== 'Namespace').map((x) => stringify(x)).join('---\n'));
}

/** Waits until the operator Deployment of the test's namespace has all its replicas ready. */
export async function operatorReady(bed: Testbed): Promise<void> {
  await eventually('the operator Deployment ready', 120_000, async () => {
    const d = (await bed.transport.call('GET', `/apis/apps/v1/namespaces/${bed.namespace}/deployments/${NAME}`)) as V1Deployment;
    return (d.status?.readyReplicas !== undefined && d.status.readyReplicas === d.spec?.replicas) || undefined;
  });
}

/** The operator's pods that are not being deleted. */
export async function operatorPods(bed: Testbed): Promise<V1Pod[]> {
  return (await bed.core.listNamespacedPod({ namespace: bed.namespace, labelSelector: `app.kubernetes.io/name=${NAME}` }))
    .items.filter((p) => !p.metadata?.deletionTimestamp);
}

/** One run of an operator container: its pod, and the JSON log lines it wrote. */
export interface ContainerLog { pod: string; lines: string[] }

/**
 * Follows the log of every operator container in the namespace, each pod as it appears, each container
 * restart anew (`kubectl logs -f`, stopped by its PID when the test ends): a rolled-away pod's log is gone
 * with the pod, so it is read while it runs.
 */
export function followOperatorLogs(t: TestContext, bed: Testbed): ContainerLog[] {
  const runs: ContainerLog[] = [];
  const following = new Map<string, ChildProcess>();
  const control = { running: true };
  const follow = (pod: string, restarts: number): void => {
    const run: ContainerLog = { pod, lines: [] };
    runs.push(run);
    const child = owned(spawn(lab().kubectl, ['--kubeconfig', lab().kubeconfig, '-n', bed.namespace, 'logs', '-f', pod], { stdio: ['ignore', 'pipe', 'ignore'] }));
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      run.lines.push(...lines.filter((l) => l.trim() !== ''));
    });
    following.set(`${pod}#${restarts}`, child);
  };
  const loop = (async () => {
    while (control.running) {
      for (const p of await operatorPods(bed).catch(() => [])) {
        const status = p.status?.containerStatuses?.[0];
        const key = `${p.metadata?.name ?? ''}#${status?.restartCount ?? 0}`;
        if (status?.state?.running && !following.has(key)) follow(p.metadata?.name ?? '', status.restartCount);
      }
      await new Promise((r) => setTimeout(r, 500));
    }
  })();
  t.after(async () => {
    control.running = false;
    await loop;
    for (const child of following.values()) if (child.exitCode === null && child.signalCode === null) child.kill();
  });
  return runs;
}

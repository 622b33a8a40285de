import { spawn } from 'node:child_process';
import { owned } from './child-stop.js';
import type { ChildProcess } from 'node:child_process';
import type { TestContext } from 'node:test';
import type { V1Pod, V1Service } from '@kubernetes/client-node';
import { ApiError } from '../../src/runtime/transport.js';
import type { Testbed } from './cluster-testbed.js';
import { isReady } from './cluster-testbed.js';
import { coreosImages, eventually, lab } from './lab.js';
import type { CoreOSImages } from './lab.js';

/**
 * The archived CoreOS etcd-operator (v0.9.4) run on the lab, for the tests of adopting the clusters it made
 * (issue 33). It runs against the lab's CRDs (ours, group etcd.database.coreos.com): never its own. What that
 * means, as measured (a test of the bed alone, before the takeover test, coreos-takeover.test.ts, replaced it):
 * - It writes its status with a PUT of the whole EtcdCluster; our CRD has the status subresource, so the API server
 *   keeps the spec and drops the status without an error: the stored status stays empty (no phase, no members).
 * - That PUT is its Go types' view of the object: fields it does not know (ours: autoCompaction, ...) are dropped,
 *   and it adds `spec.pod.ClusterDomain: ""` and `spec.pod.resources: {}` (generation 1 → 2).
 * - So never start it again on a cluster it made: with no phase stored it takes the cluster for a new one, boots a
 *   new seed member and deletes the old members' pods (seen: a fourth pod 20 s after a restart, the three old ones
 *   gone by 30 s, a new 3-member cluster by 60 s).
 */
export const COREOS_OPERATOR = 'coreos-etcd-operator';

/**
 * What v0.9.4's etcd-operator calls (read from its source, cmd/operator and pkg/cluster, pkg/util/k8sutil), in its
 * own namespace (it is not run with -cluster-wide). Its example Role grants `*` on all of these and on deployments
 * and CRDs; the operator itself never calls those (deployments are the backup operator's; CRDs only without
 * -create-crd=false).
 */
export const COREOS_OPERATOR_RULES = [
  // Member pods: created, listed by the cluster's labels every 8 s, deleted when replaced, patched to upgrade;
  // its own pod read once, for its service account.
  { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'create', 'delete', 'patch'] },
  // The client and peer Services, created once (an existing one is taken as it is).
  { apiGroups: [''], resources: ['services'], verbs: ['get', 'create'] },
  // Leader election: an Endpoints lock named etcd-operator (client-go's EndpointsResourceLock).
  { apiGroups: [''], resources: ['endpoints'], verbs: ['get', 'create', 'update'] },
  // Members on volumes (spec.pod.persistentVolumeClaimSpec).
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['create', 'delete'] },
  // Member added/removed/upgraded events, and the leader election's.
  { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch', 'update'] },
  // TLS: the operator's client certificate (spec.TLS.static.operatorSecret).
  { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
  // Its informer lists and watches clusters; it writes its status with a PUT of the whole object (not /status).
  { apiGroups: ['etcd.database.coreos.com'], resources: ['etcdclusters'], verbs: ['get', 'list', 'watch', 'update'] },
];

/** The ServiceAccount, Role, RoleBinding and Deployment that run the CoreOS operator in `namespace`. */
export function coreosOperatorObjects(namespace: string, image: string): Record<string, unknown>[] {
  const meta = { name: COREOS_OPERATOR, namespace, labels: { name: COREOS_OPERATOR } };
  return [
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta, rules: COREOS_OPERATOR_RULES },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta,
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: COREOS_OPERATOR },
      subjects: [{ kind: 'ServiceAccount', name: COREOS_OPERATOR, namespace }],
    },
    {
      apiVersion: 'apps/v1', kind: 'Deployment', metadata: meta,
      spec: {
        replicas: 1,
        strategy: { type: 'Recreate' },
        selector: { matchLabels: { name: COREOS_OPERATOR } },
        template: {
          metadata: { labels: { name: COREOS_OPERATOR } },
          spec: {
            serviceAccountName: COREOS_OPERATOR,
            terminationGracePeriodSeconds: 5,
            containers: [{
              name: 'etcd-operator',
              image,
              imagePullPolicy: 'Never',
              // As its example manifest runs it, but on the CRDs the lab has (it would create v1beta1 ones,
              // which Kubernetes no longer serves).
              command: ['etcd-operator', '-create-crd=false'],
              env: [
                { name: 'MY_POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'MY_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              // Ready once it leads and its controller has started.
              readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 1 },
            }],
          },
        },
      },
    },
  ];
}

export interface CoreOSOperator {
  images: CoreOSImages;
  namespace: string;
  /** Every line its container has written so far (its pod's log, followed while the pod runs). */
  log: string[];
  /**
   * The log lines that tell of a request the API server refused (HTTP 400/403/404/409/422, `is invalid`,
   * `forbidden`): what it writes that the lab's CRDs or Kubernetes do not take.
   */
  refusals(): string[];
  /** Scales its Deployment to 0 and waits until its pod is gone; the clusters it made keep running. */
  stop(): Promise<void>;
}

const running = (child: ChildProcess): boolean => child.exitCode === null && child.signalCode === null;
/** Resolves when the process has exited and its output is read, or after `ms`, whichever comes first. */
const closed = (child: ChildProcess, ms: number): Promise<void> => new Promise<void>((resolve) => {
  if (!running(child)) { resolve(); return; }
  const timer = setTimeout(resolve, ms);
  child.on('close', () => { clearTimeout(timer); resolve(); });
});

const podsPath = (ns: string): string => `/api/v1/namespaces/${ns}/pods?labelSelector=name%3D${COREOS_OPERATOR}`;
const collection = (o: Record<string, unknown>, ns: string): string => {
  const kind = o.kind as string;
  if (kind === 'ServiceAccount') return `/api/v1/namespaces/${ns}/serviceaccounts`;
  if (kind === 'Role' || kind === 'RoleBinding') return `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/${kind.toLowerCase()}s`;
  return `/apis/apps/v1/namespaces/${ns}/deployments`;
};

/**
 * Runs the CoreOS operator in the testbed's namespace (waiting for its images: they are built behind the lab) and
 * waits until it is ready; it is stopped, and its log followers too, when the test ends.
 */
export async function deployCoreOSOperator(t: TestContext, bed: Testbed, timeoutMs = 120_000): Promise<CoreOSOperator> {
  const images = await coreosImages();
  const { namespace, transport } = bed;
  for (const o of coreosOperatorObjects(namespace, images.operatorImage)) await transport.call('POST', collection(o, namespace), o);
  const log: string[] = [];
  const followers = new Map<string, ChildProcess>();
  const control = { following: true };
  // A pod's log is gone with the pod: read it while it runs (`kubectl logs -f`, stopped by its handle).
  const follow = (pod: string): void => {
    const child = owned(spawn(lab().kubectl, ['--kubeconfig', lab().kubeconfig, '-n', namespace, 'logs', '-f', pod], { stdio: ['ignore', 'pipe', 'ignore'] }));
    let pending = '';
    child.stdout.on('data', (chunk: Buffer) => {
      pending += chunk.toString('utf8');
      const lines = pending.split('\n');
      pending = lines.pop() ?? '';
      log.push(...lines.filter((l) => l.trim() !== ''));
    });
    child.on('close', () => { if (pending.trim() !== '') log.push(pending); pending = ''; });
    followers.set(pod, child);
  };
  const pods = async (): Promise<V1Pod[]> => ((await transport.call('GET', podsPath(namespace))) as { items: V1Pod[] }).items;
  const watcher = (async () => {
    while (control.following) {
      for (const p of await pods().catch(() => [])) {
        const name = p.metadata?.name ?? '';
        if (p.status?.containerStatuses?.[0]?.state?.running && !followers.has(name)) follow(name);
      }
      await new Promise((r) => setTimeout(r, 250));
    }
  })();
  const stopFollowing = async (): Promise<void> => {
    control.following = false;
    await watcher;
    for (const child of followers.values()) if (running(child)) child.kill();
    await Promise.all([...followers.values()].map((child) => closed(child, 5000)));
  };
  t.after(stopFollowing);
  await eventually('the CoreOS operator ready', timeoutMs, async () => ((await pods()).some(isReady) ? true : undefined), () => `its log: ${log.slice(-20).join(' | ')}`);
  return {
    images, namespace, log,
    refusals: () => log.filter((l) => /\b(400|403|404|409|422)\b|is invalid|forbidden|Unprocessable|Invalid value/i.test(l)),
    stop: async () => {
      await transport.call('PATCH', `/apis/apps/v1/namespaces/${namespace}/deployments/${COREOS_OPERATOR}`,
        { spec: { replicas: 0 } }, 'application/merge-patch+json');
      await eventually('the CoreOS operator pod gone', 60_000, async () => ((await pods()).length === 0 ? true : undefined));
      // Its follower ends with the pod: wait (a while) for the last lines.
      await Promise.all([...followers.values()].map((child) => closed(child, 10_000)));
    },
  };
}

/**
 * Sets `publishNotReadyAddresses: true` on the peer Service the CoreOS operator makes for `cluster` (headless, named
 * after the cluster) as soon as it appears; answers how long after the call that was. Without it no member of a
 * CoreOS cluster gets a DNS name on current Kubernetes: v0.9.4 marks the Service with the alpha annotation
 * service.alpha.kubernetes.io/tolerate-unready-endpoints, which EndpointSlices (so CoreDNS) ignore, and a member
 * is not ready before its name resolves (its check-dns init container waits for it). Call it before creating the
 * EtcdCluster.
 */
export async function publishNotReadyPeers(bed: Testbed, cluster: string, timeoutMs = 120_000): Promise<number> {
  const started = Date.now();
  const path = `/api/v1/namespaces/${bed.namespace}/services/${cluster}`;
  await eventually(`the CoreOS peer Service ${cluster}`, timeoutMs, async () => {
    try {
      const svc = (await bed.transport.call('GET', path)) as V1Service;
      return svc.spec?.clusterIP === 'None' ? true : undefined;
    } catch (err) {
      if (err instanceof ApiError && err.status === 404) return undefined;
      throw err;
    }
  });
  await bed.transport.call('PATCH', path, { spec: { publishNotReadyAddresses: true } }, 'application/merge-patch+json');
  return Date.now() - started;
}

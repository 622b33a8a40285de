/**
 * The two operators the side-by-side bench compares (issue 36): ours, as the host process every bench scenario
 * runs, and the official etcd-io/etcd-operator, built from its source (lab/build/etcdio-operator.sh) and run as
 * its own kustomize install makes it, a Deployment in etcd-operator-system. One is active at a time: the other is
 * stopped (ours) or scaled to no replica (theirs), so neither takes CPU from the other's run.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import { promisify } from 'node:util';
import type { CoreV1Api } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../src/api/etcd-cluster.js';
import type { ApiTransport } from '../src/runtime/transport.js';
import { eventually, lab, labCommand } from '../test/support/lab.js';
import { spawnOperator } from '../test/support/operator-process.js';
import type { OperatorProcess } from '../test/support/operator-process.js';

const run = promisify(execFile);

export interface Contender {
  name: 'ours' | 'etcd-io';
  /** Running and ready to act on new clusters. */
  start(): Promise<void>;
  stop(): Promise<void>;
  create(namespace: string, name: string, size: number): Promise<void>;
  scale(namespace: string, name: string, size: number): Promise<void>;
  /** The label selector of a cluster's member pods. */
  selector(name: string): string;
  /** The operator's process on this host (a pod's processes are the host's on the lab), for its memory and CPU. */
  pid(): Promise<number>;
  /** The node its pod runs on; none for a host process. */
  node(): Promise<string | undefined>;
}

/**
 * The lab's kubeconfig as JSON, for ours: an operator in a pod reads no kubeconfig, and one read as JSON leaves
 * the YAML parser (some 4 MiB of RSS) unloaded, so the host process holds what the Deployment's would.
 */
function jsonKubeconfig(): string {
  const path = join(mkdtempSync(join(tmpdir(), 'bench-kubeconfig-')), 'config.json');
  writeFileSync(path, JSON.stringify(parse(readFileSync(lab().kubeconfig, 'utf8'))), { mode: 0o600 });
  return path;
}

/** Ours, as the host process (`etcd-operator run --cluster-wide`), on the lab's oldest etcd. */
export function ours(transport: ApiTransport, version: string): Contender {
  let operator: OperatorProcess | undefined;
  const path = (namespace: string): string => `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`;
  const kubeconfig = jsonKubeconfig();
  return {
    name: 'ours',
    start: async () => {
      operator = spawnOperator(undefined, [], kubeconfig);
      await operator.metricsUrl();
    },
    stop: async () => { await operator?.stop(); operator = undefined; },
    create: async (namespace, name, size) => {
      await transport.call('POST', path(namespace), { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name }, spec: { size, version } });
    },
    scale: async (namespace, name, size) => {
      await transport.call('PATCH', `${path(namespace)}/${name}`, { spec: { size } }, 'application/merge-patch+json');
    },
    selector: (name) => `etcd_cluster=${name}`,
    pid: () => Promise.resolve(operator?.pid ?? 0),
    node: () => Promise.resolve(undefined),
  };
}

/** What lab/build/etcdio-operator.sh prints: the image it packed and the manifests it rendered. */
interface EtcdIoBuild { image: string; manifests: string }

const THEIR_NAMESPACE = 'etcd-operator-system';
const THEIR_DEPLOYMENT = 'etcd-operator-controller-manager';
const THEIR_GROUP = 'operator.etcd.io/v1alpha1';
/** Its LeaderElectionID (cmd/main.go); controller-runtime's holder identity is `<pod name>_<uuid>`. */
const THEIR_LEASE = 'cc4a0f4b.etcd.io';

/**
 * The official operator: built (cached) and imported onto the nodes, its manifests applied once; started and
 * stopped by its Deployment's replicas. Its members run `<imageRegistry>:<version>`, the lab's etcd image.
 */
export async function etcdIo(core: CoreV1Api, transport: ApiTransport, image: string): Promise<Contender> {
  const built = JSON.parse((await run('bash', ['lab/build/etcdio-operator.sh'], { maxBuffer: 1 << 24 })).stdout.trim().split('\n').at(-1) ?? '{}') as EtcdIoBuild;
  await labCommand(['import-images']);
  await run(lab().kubectl, ['--kubeconfig', lab().kubeconfig, 'apply', '--server-side', '--force-conflicts', '-f', built.manifests]);
  const [registry, version] = image.split(/:(?=v[^:]+$)/);
  const path = (namespace: string): string => `/apis/${THEIR_GROUP}/namespaces/${namespace}/etcdclusters`;
  const replicas = async (n: number): Promise<void> => {
    await transport.call('PATCH', `/apis/apps/v1/namespaces/${THEIR_NAMESPACE}/deployments/${THEIR_DEPLOYMENT}/scale`, { spec: { replicas: n } }, 'application/merge-patch+json');
  };
  const managerPods = async () => (await core.listNamespacedPod({ namespace: THEIR_NAMESPACE, labelSelector: 'control-plane=controller-manager' })).items;
  const running = async () => (await managerPods()).find((p) => !p.metadata?.deletionTimestamp);
  return {
    name: 'etcd-io',
    start: async () => {
      await replicas(1);
      const pod = await eventually('etcd-io operator ready', 120_000, async () => (await managerPods()).find((p) => !p.metadata?.deletionTimestamp
        && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')));
      // It runs with --leader-elect and is Ready before it leads: a new pod waits out its predecessor's lease, which
      // is no part of any scenario's time.
      await eventually('etcd-io operator leading', 120_000, async () => {
        const lease = (await transport.call('GET', `/apis/coordination.k8s.io/v1/namespaces/${THEIR_NAMESPACE}/leases/${THEIR_LEASE}`)) as { spec?: { holderIdentity?: string } };
        return lease.spec?.holderIdentity?.startsWith(`${pod.metadata?.name ?? '?'}_`) ? true : undefined;
      });
    },
    stop: async () => {
      await replicas(0);
      await eventually('etcd-io operator stopped', 120_000, async () => ((await managerPods()).length === 0 ? true : undefined));
    },
    create: async (namespace, name, size) => {
      await transport.call('POST', path(namespace), { apiVersion: THEIR_GROUP, kind: 'EtcdCluster', metadata: { name }, spec: { size, version, imageRegistry: registry } });
    },
    scale: async (namespace, name, size) => {
      await transport.call('PATCH', `${path(namespace)}/${name}`, { spec: { size } }, 'application/merge-patch+json');
    },
    selector: (name) => `app=${name},controller=${name}`,
    pid: async () => hostPidOf((await running())?.metadata?.uid ?? '', '/manager'),
    node: async () => (await running())?.spec?.nodeName,
  };
}

/** The host PID of the process running `command` in the pod of that UID (its cgroup path names the pod, '-' or '_'). */
async function hostPidOf(podUid: string, command: string): Promise<number> {
  if (podUid === '') throw new Error(`no pod runs ${command}`);
  const markers = [podUid, podUid.replaceAll('-', '_')];
  const { stdout } = await run('ps', ['-eo', 'pid=,args=']);
  for (const line of stdout.split('\n')) {
    const [pid, args] = [line.trim().split(/\s+/, 1)[0] ?? '', line.trim().replace(/^\d+\s+/, '')];
    if (!args.startsWith(command)) continue;
    try {
      const cgroup = readFileSync(`/proc/${pid}/cgroup`, 'utf8');
      if (markers.some((m) => cgroup.includes(m))) return Number(pid);
    } catch { /* gone meanwhile */ }
  }
  throw new Error(`no process ${command} in pod ${podUid}`);
}

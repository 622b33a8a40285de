import { kubeConfigCredentials } from '../../src/runtime/credentials.js';
import type { TestContext } from 'node:test';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { ApiTransport } from '../../src/runtime/transport.js';
import { allCrds } from '../../src/api/crds.js';
import { GROUP, VERSION } from '../../src/api/etcd-cluster.js';
import type { ClusterSpec, EtcdCluster } from '../../src/api/etcd-cluster.js';
import { adminKubeConfig, lab, testNamespace } from './lab.js';
import type { PodSecurityLevel } from './lab.js';
import { ensureCrd } from './test-crd.js';

export interface Testbed {
  core: CoreV1Api;
  transport: ApiTransport;
  namespace: string;
  /** The EtcdCluster collection of the namespace. */
  path: string;
  create(name: string, spec: ClusterSpec): Promise<EtcdCluster>;
  get(name: string): Promise<EtcdCluster>;
  patchSpec(name: string, spec: Partial<ClusterSpec>): Promise<void>;
  /** The cluster's pods that are not being deleted. */
  pods(cluster: string): Promise<V1Pod[]>;
  /** http://<ClusterIP of the cluster's client Service>:2379 */
  clientEndpoint(cluster: string): Promise<string>;
  /** A Secret of string entries in the namespace. */
  secret(name: string, data: Record<string, string>): Promise<void>;
  /** The member pod names, sorted, when the cluster is settled (settledPods); else undefined. */
  settledMembers(cluster: string, size: number, version?: string): Promise<string[] | undefined>;
  /** Runs `fn` when the test ends, passed or failed. */
  after(fn: () => unknown): void;
}

/**
 * The CRDs installed, a namespace of the test's own, and clients; the operator is started by each test. The
 * namespace enforces the "restricted" Pod Security Standard unless a test says otherwise (one that runs pods the
 * operator did not make, or root members on purpose): every pod the operator makes must pass it.
 */
export async function testbed(t: TestContext, prefix: string, podSecurity: PodSecurityLevel = 'restricted'): Promise<Testbed> {
  const kc = adminKubeConfig();
  const transport = new ApiTransport(kubeConfigCredentials(kc));
  t.after(() => { transport.agent.destroy(); });
  // The operator watches all three kinds: it serves nothing until every CRD is there.
  for (const crd of allCrds()) await ensureCrd(transport, crd);
  const namespace = await testNamespace(t, prefix, podSecurity);
  const core = kc.makeApiClient(CoreV1Api);
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`;
  return {
    core, transport, namespace, path,
    after: (fn) => { t.after(fn); },
    create: async (name, spec) => (await transport.call('POST', path, { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name }, spec })) as EtcdCluster,
    get: async (name) => (await transport.call('GET', `${path}/${name}`)) as EtcdCluster,
    patchSpec: async (name, spec) => { await transport.call('PATCH', `${path}/${name}`, { spec }, 'application/merge-patch+json'); },
    pods: async (cluster) => (await core.listNamespacedPod({ namespace, labelSelector: `etcd_cluster=${cluster}` })).items.filter((p) => !p.metadata?.deletionTimestamp),
    clientEndpoint: async (cluster) => `http://${(await core.readNamespacedService({ name: `${cluster}-client`, namespace })).spec?.clusterIP ?? ''}:2379`,
    settledMembers: async (cluster, size, version) =>
      (await settledPods(core, (await transport.call('GET', `${path}/${cluster}`)) as EtcdCluster, size, version))?.map((p) => p.metadata?.name ?? '').sort(),
    secret: async (name, data) => {
      await core.createNamespacedSecret({ namespace, body: { metadata: { name }, data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')])) } });
    },
  };
}

/** The settled members (Testbed.settledMembers) when their pods run on every node of the lab; else undefined. */
export async function membersOnEveryNode(bed: Testbed, cluster: string, size: number): Promise<string[] | undefined> {
  const members = await bed.settledMembers(cluster, size);
  if (!members) return undefined;
  // Only the settled members' pods: a member added since (the next step of a move) has a pod already, on the
  // node the move is for, and must not make the members look spread before the move is done.
  const nodes = new Set((await bed.pods(cluster)).filter((p) => members.includes(p.metadata?.name ?? '')).map((p) => p.spec?.nodeName));
  return lab().nodes.every((n) => nodes.has(n.name)) ? members : undefined;
}

export const isReady = (p: V1Pod): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/**
 * A cluster at rest: Available, `size` members in etcd all ready (on `version`, when given), and exactly `size`
 * live pods, all ready. Answers the pods, or undefined.
 */
export async function settledPods(core: CoreV1Api, cluster: EtcdCluster, size: number, version?: string): Promise<V1Pod[] | undefined> {
  const available = cluster.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True') ?? false;
  if (!available || cluster.status?.readyMembers !== size || cluster.status.size !== size || (version && cluster.status.currentVersion !== version)) return undefined;
  const pods = (await core.listNamespacedPod({ namespace: cluster.metadata.namespace, labelSelector: `etcd_cluster=${cluster.metadata.name}` }))
    .items.filter((p) => !p.metadata?.deletionTimestamp);
  return pods.length === size && pods.every(isReady) ? pods : undefined;
}

/** The spec part that puts each member on a claim of the lab's default StorageClass (node-local volumes). */
export const ON_VOLUMES: ClusterSpec['pod'] = {
  persistentVolumeClaimSpec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
};

/** What a wait on a cluster that timed out last saw of it: its phase, ready members and conditions, and its pods. */
export async function describeCluster(bed: Testbed, name: string): Promise<string> {
  const { phase, conditions, members } = (await bed.get(name)).status ?? {};
  const pods = (await bed.pods(name)).map((p) => `${p.metadata?.name ?? ''} on ${p.spec?.nodeName ?? '-'} ${p.status?.phase ?? ''}`);
  return `status ${JSON.stringify({ phase, ready: members, conditions: conditions?.map((c) => `${c.type}=${c.status} ${c.reason ?? ''}: ${c.message ?? ''}`) })}; pods ${pods.join(', ')}`;
}

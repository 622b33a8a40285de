/** What the benchmark scenarios share: a namespace of their own, and an EtcdCluster to create, change and wait on. */
import { randomBytes } from 'node:crypto';
import type { CoreV1Api } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../src/api/etcd-cluster.js';
import type { ClusterSpec, EtcdCluster } from '../src/api/etcd-cluster.js';
import type { ApiTransport } from '../src/runtime/transport.js';
import { eventually } from '../test/support/lab.js';
import { settledPods } from '../test/support/cluster-testbed.js';

/** Runs `fn` in a new namespace, deleted afterwards whatever happens. */
export async function inNamespace<T>(core: CoreV1Api, fn: (namespace: string) => Promise<T>): Promise<T> {
  const namespace = `bench-${randomBytes(3).toString('hex')}`;
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  try {
    return await fn(namespace);
  } finally {
    // Gone before the next scenario: its terminating pods would take the CPU that one is timed on.
    await core.deleteNamespace({ name: namespace, body: { gracePeriodSeconds: 0 } });
    await eventually(`namespace ${namespace} gone`, 180_000, async () => ((await core.listNamespace()).items.some((n) => n.metadata?.name === namespace) ? undefined : true));
  }
}

export interface BenchCluster {
  create(spec: ClusterSpec): Promise<void>;
  get(): Promise<EtcdCluster>;
  patch(spec: Partial<ClusterSpec>): Promise<void>;
  /** Available, at `size` members all ready (on `version`, when given), and as many live pods, all ready. */
  isSettled(size: number, version?: string): Promise<boolean>;
  /** Waits (bounded) until isSettled. */
  settle(size: number, version?: string, timeoutMs?: number): Promise<void>;
}

export function benchCluster(core: CoreV1Api, transport: ApiTransport, namespace: string, name: string): BenchCluster {
  const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters`;
  const get = async (): Promise<EtcdCluster> => (await transport.call('GET', `${path}/${name}`)) as EtcdCluster;
  const isSettled = async (size: number, version?: string): Promise<boolean> => (await settledPods(core, await get(), size, version)) !== undefined;
  return {
    create: async (spec) => { await transport.call('POST', path, { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', metadata: { name }, spec }); },
    get,
    patch: async (spec) => { await transport.call('PATCH', `${path}/${name}`, { spec }, 'application/merge-patch+json'); },
    isSettled,
    settle: async (size, version, timeoutMs = 180_000) => {
      await eventually(`${name}: ${size} members settled${version ? ` on ${version}` : ''}`, timeoutMs, async () => ((await isSettled(size, version)) ? true : undefined));
    },
  };
}

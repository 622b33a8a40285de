import type { V1Pod } from '@kubernetes/client-node';
import type { Store } from '../../runtime/store.js';
import type { EtcdClient } from '../../etcd/client.js';
import { clientUrl } from '../../etcd/identity.js';
import { clusterAddress, tlsSecretNames } from '../../k8s/tls-secrets.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';
import type { BackupSpec } from '../../api/etcd-backup.js';
import { podReady } from '../cluster/views.js';
import { ConfigurationError } from '../cluster/tls.js';
import type { EtcdClients } from '../cluster/tls.js';

export interface SnapshotSource {
  etcd: EtcdClient;
  /** Client URLs to try in order. */
  endpoints: string[];
  /** The Secret holding the client certificate, for a TLS cluster. */
  tlsSecret?: string;
}

/**
 * Where a backup reads its snapshot: a managed cluster's ready members (followers first, to spare the
 * leader) with the cluster's own client certificate, or the endpoints given (CoreOS).
 */
export async function snapshotSource(
  spec: BackupSpec, namespace: string, clusters: Store<EtcdCluster>, pods: Store<V1Pod>, clients: EtcdClients, clusterDomain: string,
): Promise<SnapshotSource> {
  if (spec.clusterName) {
    const cluster = clusters.get(namespace, spec.clusterName);
    if (!cluster?.metadata.uid) throw new ConfigurationError('ClusterNotFound', `EtcdCluster ${spec.clusterName} does not exist`);
    const names = tlsSecretNames(spec.clusterName, cluster.spec);
    const address = clusterAddress(spec.clusterName, namespace, cluster.spec, clusterDomain);
    const leader = cluster.status?.leader;
    const members = pods.ownedBy(cluster.metadata.uid).filter((p) => podReady(p) && !p.metadata?.deletionTimestamp)
      .map((p) => p.metadata?.name ?? '').sort((a, b) => Number(a === leader) - Number(b === leader));
    if (members.length === 0) throw new ConfigurationError('NoReadyMember', `EtcdCluster ${spec.clusterName} has no ready member`);
    return {
      etcd: await clients.forCluster(namespace, names), endpoints: members.map((m) => clientUrl(address, m)),
      ...(names ? { tlsSecret: names.operator } : {}),
    };
  }
  const tls = spec.clientTLSSecret ? { peer: '', server: '', operator: spec.clientTLSSecret, auto: false } : undefined;
  return { etcd: await clients.forCluster(namespace, tls), endpoints: spec.etcdEndpoints ?? [], ...(tls ? { tlsSecret: tls.operator } : {}) };
}

/** The first of `endpoints` that answers `ask`, with its answer; when none does, an error with every one's reason. */
export async function firstAnswer<T>(endpoints: string[], ask: (endpoint: string) => Promise<T>): Promise<{ endpoint: string; value: T }> {
  const errors: string[] = [];
  for (const endpoint of endpoints) {
    try {
      return { endpoint, value: await ask(endpoint) };
    } catch (err) {
      errors.push((err as Error).message);
    }
  }
  throw new Error(`no etcd endpoint answered: ${errors.join('; ') || 'none given'}`);
}

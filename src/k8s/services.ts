import type { V1Service } from '@kubernetes/client-node';
import { CLIENT_PORT, PEER_PORT } from '../etcd/identity.js';
import { METRICS_PORT } from './member-pod.js';
import type { ClusterAddress } from '../etcd/identity.js';
import { clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/**
 * The headless Service that gives each member its DNS name `<member>.<cluster>.<ns>.svc`. Not-ready
 * addresses are published: a member must resolve its peers before any of them is ready.
 */
export function peerService(a: ClusterAddress, clusterUid: string): V1Service {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: a.cluster, namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)] },
    spec: {
      clusterIP: 'None', publishNotReadyAddresses: true, selector: clusterLabels(a.cluster),
      ports: [{ name: 'client', port: CLIENT_PORT }, { name: 'peer', port: PEER_PORT }],
    },
  };
}

/** `<cluster>-client`: what applications connect to; only ready members receive traffic. */
export function clientService(a: ClusterAddress, clusterUid: string): V1Service {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: { name: `${a.cluster}-client`, namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)] },
    spec: { selector: clusterLabels(a.cluster), ports: [{ name: 'client', port: CLIENT_PORT }] },
  };
}

/** The name of a cluster's metrics Service: a cluster of that name would need it for its own peers. */
export const metricsServiceName = (cluster: string): string => `${cluster}-metrics`;

/**
 * Whether a Service is another cluster's metrics Service (`<other>-metrics`, owned by `<other>`), not the cluster
 * of uid's: one made before a cluster named `<other>-metrics` was created holds that cluster's peer Service name.
 */
export function metricsServiceOfAnother(svc: V1Service, clusterUid: string): boolean {
  const owner = svc.metadata?.ownerReferences?.find((r) => r.kind === 'EtcdCluster');
  return owner !== undefined && owner.uid !== clusterUid && svc.metadata?.name === metricsServiceName(owner.name);
}

/**
 * `<cluster>-metrics`: every member's plain metrics listener (etcd's /metrics, under TLS clusters too), for a
 * ServiceMonitor (by its port's name) or a Prometheus that keeps targets by the prometheus.io annotations. Headless,
 * with members not ready: a member in trouble is the one whose metrics matter most.
 */
export function metricsService(a: ClusterAddress, clusterUid: string): V1Service {
  return {
    apiVersion: 'v1', kind: 'Service',
    metadata: {
      name: metricsServiceName(a.cluster), namespace: a.namespace, labels: clusterLabels(a.cluster), ownerReferences: [ownedByCluster(a.cluster, clusterUid)],
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(METRICS_PORT), 'prometheus.io/path': '/metrics' },
    },
    spec: {
      clusterIP: 'None', publishNotReadyAddresses: true, selector: clusterLabels(a.cluster),
      ports: [{ name: 'metrics', port: METRICS_PORT }],
    },
  };
}

import type { V1Pod, V1Service } from '@kubernetes/client-node';

/**
 * The physical-limit baseline: an N-member etcd cluster as a plain script would start it, all members at
 * once as fixed pods with a static --initial-cluster, no operator involved.
 */
export function staticCluster(namespace: string, members: number, image: string, domain: string): { service: V1Service; pods: V1Pod[] } {
  const names = Array.from({ length: members }, (_, i) => `static-${i}`);
  const peer = (name: string): string => `http://${name}.static.${namespace}.svc.${domain}:2380`;
  const initialCluster = names.map((n) => `${n}=${peer(n)}`).join(',');
  const service: V1Service = {
    metadata: { name: 'static' },
    spec: {
      clusterIP: 'None', publishNotReadyAddresses: true, selector: { app: 'static-etcd' },
      ports: [{ name: 'client', port: 2379 }, { name: 'peer', port: 2380 }],
    },
  };
  const pods = names.map((name): V1Pod => ({
    metadata: { name, labels: { app: 'static-etcd' } },
    spec: {
      hostname: name,
      subdomain: 'static',
      containers: [{
        name: 'etcd',
        image,
        command: [
          '/usr/local/bin/etcd', `--name=${name}`, '--data-dir=/var/lib/etcd/data',
          '--listen-client-urls=http://0.0.0.0:2379', `--advertise-client-urls=http://${name}.static.${namespace}.svc.${domain}:2379`,
          '--listen-peer-urls=http://0.0.0.0:2380', `--initial-advertise-peer-urls=${peer(name)}`,
          `--initial-cluster=${initialCluster}`, '--initial-cluster-state=new', `--initial-cluster-token=${namespace}`,
        ],
        readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 },
      }],
    },
  }));
  return { service, pods };
}

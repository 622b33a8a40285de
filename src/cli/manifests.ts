/** `etcd-operator manifests`: what to apply to install the operator. */
import { parseArgs } from 'node:util';
import { DEFAULT_INSTALL, installManifests } from '../install/manifests.js';
import type { InstallOptions } from '../install/manifests.js';
import { UsageError } from './usage.js';

export const MANIFESTS_USAGE = `usage: etcd-operator manifests [--namespace NS] [--cluster-wide] [--image IMAGE] [--image-pull-policy P] [--log-level L] [--metrics-port N] [--replicas N] [--allow-backup-endpoints]
  Prints the CRDs, the ServiceAccount, least-privilege RBAC and the Deployment as one YAML stream for kubectl apply.
  Namespaced (default): the operator runs in NS (default "default") and manages clusters there, with a Role.
  --cluster-wide: it manages every namespace, with a ClusterRole (leases stay a Role in NS).
  --replicas: one leads, the others stand by on other nodes (default 2: the operator survives its node's loss).
  --allow-backup-endpoints: EtcdBackups may name etcdEndpoints, any etcd the operator's network reaches (off by default).`;

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

export function manifestOptions(argv: string[]): InstallOptions {
  const { values } = parseArgs({
    args: argv, options: {
      namespace: { type: 'string', default: DEFAULT_INSTALL.namespace }, 'cluster-wide': { type: 'boolean', default: false },
      image: { type: 'string', default: DEFAULT_INSTALL.image }, 'image-pull-policy': { type: 'string', default: DEFAULT_INSTALL.imagePullPolicy },
      'log-level': { type: 'string', default: DEFAULT_INSTALL.logLevel }, 'metrics-port': { type: 'string', default: String(DEFAULT_INSTALL.metricsPort) },
      replicas: { type: 'string', default: String(DEFAULT_INSTALL.replicas) }, 'allow-backup-endpoints': { type: 'boolean', default: false },
    },
  });
  const policy = PULL_POLICIES.find((p) => p === values['image-pull-policy']);
  if (!policy) throw new UsageError(`--image-pull-policy: one of ${PULL_POLICIES.join(', ')}`);
  const port = Number(values['metrics-port']);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--metrics-port: ${values['metrics-port']} is not a port`);
  const replicas = Number(values.replicas);
  if (!Number.isInteger(replicas) || replicas < 1 || replicas > 5) throw new UsageError(`--replicas: ${values.replicas} is not a count from 1 to 5`);
  return {
    ...DEFAULT_INSTALL, namespace: values.namespace, clusterWide: values['cluster-wide'], image: values.image, imagePullPolicy: policy,
    logLevel: values['log-level'], metricsPort: port, replicas, allowBackupEndpoints: values['allow-backup-endpoints'],
  };
}

export function manifestsCommand(argv: string[]): number {
  process.stdout.write(installManifests(manifestOptions(argv)));
  return 0;
}

/** `etcd-operator manifests`: what to apply to install the operator. */
import { parseArgs } from 'node:util';
import { DEFAULT_INSTALL, installManifests } from '../install/manifests.js';
import type { InstallOptions } from '../install/manifests.js';
import { UsageError } from './usage.js';

export const MANIFESTS_USAGE = `usage: etcd-operator manifests [--namespace NS] [--cluster-wide] [--image IMAGE] [--image-pull-policy P] [--log-level L] [--metrics-port N]
  Prints the CRDs, the ServiceAccount, least-privilege RBAC and the Deployment as one YAML stream for kubectl apply.
  Namespaced (default): the operator runs in NS (default "default") and manages clusters there, with a Role.
  --cluster-wide: it manages every namespace, with a ClusterRole (leases stay a Role in NS).`;

const PULL_POLICIES = ['Always', 'IfNotPresent', 'Never'] as const;

export function manifestOptions(argv: string[]): InstallOptions {
  const { values } = parseArgs({
    args: argv, options: {
      namespace: { type: 'string', default: DEFAULT_INSTALL.namespace }, 'cluster-wide': { type: 'boolean', default: false },
      image: { type: 'string', default: DEFAULT_INSTALL.image }, 'image-pull-policy': { type: 'string', default: DEFAULT_INSTALL.imagePullPolicy },
      'log-level': { type: 'string', default: DEFAULT_INSTALL.logLevel }, 'metrics-port': { type: 'string', default: String(DEFAULT_INSTALL.metricsPort) },
    },
  });
  const policy = PULL_POLICIES.find((p) => p === values['image-pull-policy']);
  if (!policy) throw new UsageError(`--image-pull-policy: one of ${PULL_POLICIES.join(', ')}`);
  const port = Number(values['metrics-port']);
  if (!Number.isInteger(port) || port < 1 || port > 65535) throw new UsageError(`--metrics-port: ${values['metrics-port']} is not a port`);
  return {
    ...DEFAULT_INSTALL, namespace: values.namespace, clusterWide: values['cluster-wide'], image: values.image, imagePullPolicy: policy,
    logLevel: values['log-level'], metricsPort: port,
  };
}

export function manifestsCommand(argv: string[]): number {
  process.stdout.write(installManifests(manifestOptions(argv)));
  return 0;
}

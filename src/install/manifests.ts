import type {
  V1ClusterRole, V1ClusterRoleBinding, V1Deployment, V1Namespace, V1ResourceRequirements, V1Role, V1RoleBinding, V1ServiceAccount,
} from '@kubernetes/client-node';
import { stringify } from 'yaml';
import { lockedDownContainer, nonRootPod } from '../k8s/security.js';
import { allCrds } from '../api/crds.js';
import type { CrdManifest } from '../api/crds.js';
import { OPERATOR_VERSION } from '../version.js';
import { LEASE_RULES, NODE_RULES, OPERATOR_RULES } from './rbac.js';
import { OPERATOR_COMMAND } from './operator-command.js';

/** How the operator is installed; the Helm chart's values carry the same settings. */
export interface InstallOptions {
  /** Where the operator runs (and, unless cluster-wide, the one namespace whose clusters it manages). */
  namespace: string;
  clusterWide: boolean;
  image: string;
  imagePullPolicy: 'Always' | 'IfNotPresent' | 'Never';
  logLevel: string;
  metricsPort: number;
  resources: V1ResourceRequirements;
  /** Replicas: one leads, the others stand by to take over when its node is lost. */
  replicas: number;
  /** EtcdBackups may name etcdEndpoints, an etcd the operator does not manage (run's --allow-backup-endpoints). */
  allowBackupEndpoints: boolean;
}

export const NAME = 'etcd-operator';

export const DEFAULT_INSTALL: InstallOptions = {
  namespace: 'default', clusterWide: false, image: `${NAME}:${OPERATOR_VERSION}`, imagePullPolicy: 'IfNotPresent', logLevel: 'info', metricsPort: 8080,
  resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '256Mi' } }, replicas: 2, allowBackupEndpoints: false,
};

/**
 * How long a replica stays bound to a node that stopped answering before it is evicted (Kubernetes' default is
 * 300 s). The standby takes over within a lease period whatever this is; this only brings back the second
 * replica sooner, so that a second node loss still finds one.
 */
const NODE_GONE_TOLERATION_S = 30;

type InstallObject = V1Namespace | V1ServiceAccount | V1Role | V1RoleBinding | V1ClusterRole | V1ClusterRoleBinding | V1Deployment;

const selectorLabels = { 'app.kubernetes.io/name': NAME };
const labels = { ...selectorLabels, 'app.kubernetes.io/version': OPERATOR_VERSION };
const RBAC = 'rbac.authorization.k8s.io';

/**
 * Binds the operator's ServiceAccount to a Role in its namespace, or a ClusterRole when it manages every
 * namespace. Leases are granted in its own namespace only, in both modes; nodes are read in both.
 */
function rbac(o: InstallOptions): InstallObject[] {
  const subjects = [{ kind: 'ServiceAccount', name: NAME, namespace: o.namespace }];
  const meta = { name: NAME, namespace: o.namespace, labels };
  const leaseRole = (rules: typeof LEASE_RULES): InstallObject[] => [
    { apiVersion: `${RBAC}/v1`, kind: 'Role', metadata: meta, rules },
    { apiVersion: `${RBAC}/v1`, kind: 'RoleBinding', metadata: meta, roleRef: { apiGroup: RBAC, kind: 'Role', name: NAME }, subjects },
  ];
  if (!o.clusterWide) {
    // The one cluster-scoped right of a namespaced install, named after its namespace: installs in two namespaces do not share it.
    const nodes = { name: `${NAME}-nodes-${o.namespace}`, labels };
    return [
      ...leaseRole([...OPERATOR_RULES, ...LEASE_RULES]),
      { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: nodes, rules: NODE_RULES },
      { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: nodes, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: nodes.name }, subjects },
    ];
  }
  return [
    { apiVersion: `${RBAC}/v1`, kind: 'ClusterRole', metadata: { name: NAME, labels }, rules: [...OPERATOR_RULES, ...NODE_RULES] },
    { apiVersion: `${RBAC}/v1`, kind: 'ClusterRoleBinding', metadata: { name: NAME, labels }, roleRef: { apiGroup: RBAC, kind: 'ClusterRole', name: NAME }, subjects },
    ...leaseRole(LEASE_RULES),
  ];
}

/**
 * Two replicas with leader election: one acts, the other stands by on another node (spread as a preference, so a
 * one-node cluster still runs both) and takes the lease within its 15 s when the leader's node is lost; a rolling
 * update never has two acting. Non-root on a read-only root filesystem with no capabilities; health and metrics
 * on one port.
 */
function deployment(o: InstallOptions): V1Deployment {
  const args = [
    'run', ...(o.clusterWide ? ['--cluster-wide'] : [`--namespace=${o.namespace}`]), '--leader-elect', `--lease-namespace=${o.namespace}`,
    `--metrics-address=0.0.0.0:${o.metricsPort}`, `--log-level=${o.logLevel}`, `--image=${o.image}`,
    ...(o.allowBackupEndpoints ? ['--allow-backup-endpoints'] : []),
  ];
  const probe = (path: string): object => ({ httpGet: { path, port: 'metrics' }, periodSeconds: 10 });
  return {
    apiVersion: 'apps/v1', kind: 'Deployment',
    metadata: { name: NAME, namespace: o.namespace, labels },
    spec: {
      replicas: o.replicas,
      selector: { matchLabels: selectorLabels },
      template: {
        metadata: { labels, annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': String(o.metricsPort) } },
        spec: {
          serviceAccountName: NAME,
          securityContext: nonRootPod,
          topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selectorLabels } }],
          tolerations: ['not-ready', 'unreachable'].map((t) => ({ key: `node.kubernetes.io/${t}`, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: NODE_GONE_TOLERATION_S })),
          containers: [{
            name: NAME, image: o.image, imagePullPolicy: o.imagePullPolicy, command: [...OPERATOR_COMMAND], args,
            ports: [{ name: 'metrics', containerPort: o.metricsPort }],
            livenessProbe: probe('/healthz'), readinessProbe: probe('/readyz'),
            resources: o.resources,
            securityContext: lockedDownContainer,
          }],
        },
      },
    },
  };
}

/** The operator's own objects, in the order they apply. */
export function operatorObjects(o: InstallOptions): InstallObject[] {
  return [
    ...(o.namespace === 'default' ? [] : [{ apiVersion: 'v1', kind: 'Namespace', metadata: { name: o.namespace } } satisfies V1Namespace]),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace: o.namespace, labels } },
    ...rbac(o),
    deployment(o),
  ];
}

/** What `etcd-operator manifests` prints: the CRDs, then the operator, as one multi-document YAML stream. */
export function installManifests(o: InstallOptions): string {
  const objects: (CrdManifest | InstallObject)[] = [...allCrds(), ...operatorObjects(o)];
  return objects.map((x) => stringify(x, { lineWidth: 0, aliasDuplicateObjects: false })).join('---\n');
}

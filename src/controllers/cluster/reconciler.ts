import type { V1PersistentVolumeClaim, V1Pod, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { ignoreStatus } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import type { Reconcile, ReconcileContext, ReconcileResult } from '../../runtime/controller.js';
import type { Store } from '../../runtime/store.js';
import type { EventRecorder } from '../../runtime/events.js';
import { writeStatus } from '../../runtime/status.js';
import { rfc3339 } from '../../runtime/time.js';
import { GROUP, VERSION } from '../../api/etcd-cluster.js';
import type { ClusterStatus, EtcdCluster } from '../../api/etcd-cluster.js';
import type { EtcdClient } from '../../etcd/client.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { plan, votersOf } from '../../etcd/planner.js';
import type { Action } from '../../etcd/planner.js';
import { clientService, peerService } from '../../k8s/services.js';
import { memberDisruptionBudget, minAvailable } from '../../k8s/disruption-budget.js';
import { observeEtcd } from './observe.js';
import { execute } from './execute.js';
import { clusterState } from './views.js';
import type { PlannerSettings } from './views.js';
import { clusterStatus } from './status.js';

export interface ClusterReconcilerDeps {
  transport: ApiTransport;
  etcd: EtcdClient;
  events: EventRecorder;
  clusters: Store<EtcdCluster>;
  pods: Store<V1Pod>;
  claims: Store<V1PersistentVolumeClaim>;
  services: Store<V1Service>;
  budgets: Store<V1PodDisruptionBudget>;
  clusterDomain: string;
  settings: PlannerSettings;
}

const QUIET: Action['type'][] = ['Wait', 'Steady', 'Paused', 'MarkBootstrapped'];
const WARNINGS: Action['type'][] = ['QuorumLost', 'UpgradeRefused'];

/** reconcile(namespace/name) for EtcdCluster: one planned action per pass, then the status that follows. */
export function clusterReconciler(d: ClusterReconcilerDeps): Reconcile {
  return async (key: string, { log }: ReconcileContext): Promise<ReconcileResult | undefined> => {
    const [namespace = '', name = ''] = key.split('/');
    const cluster = d.clusters.get(namespace, name);
    // Gone: everything it made carries its owner reference, and the garbage collector removes it.
    if (!cluster?.metadata.uid || cluster.metadata.deletionTimestamp) return undefined;
    const uid = cluster.metadata.uid;
    const address: ClusterAddress = { cluster: name, namespace, domain: cluster.spec.pod?.ClusterDomain ?? d.clusterDomain, tls: false };

    await ensureServices(d, address, uid);
    const pods = d.pods.ownedBy(uid);
    const claims = d.claims.ownedBy(uid).map((c) => c.metadata?.name ?? '');
    const etcdView = await observeEtcd(d.etcd, address, pods);
    const state = clusterState(cluster, { pods, claims, ...etcdView }, d.settings, Date.now());
    const action = plan(state);
    if (!QUIET.includes(action.type)) log.info({ action }, 'acting');
    const requeueAfterMs = await execute(action, { transport: d.transport, etcd: d.etcd, cluster, address, ...etcdView, log });
    await ensureDisruptionBudget(d, address, uid, minAvailable(Math.max(cluster.spec.size, votersOf(state.members).length)));

    const path = `/apis/${GROUP}/${VERSION}/namespaces/${namespace}/etcdclusters/${name}`;
    await writeStatus<ClusterStatus, EtcdCluster>(d.transport, path, cluster, (current) => {
      const next = clusterStatus(current, state, action, etcdView.statuses, rfc3339(Date.now()));
      return JSON.stringify(next) === JSON.stringify(current.status) ? undefined : next;
    });
    if (!QUIET.includes(action.type)) {
      const involved = { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', name, namespace, uid };
      const message = 'reason' in action ? `${action.type}: ${action.reason}` : action.type;
      await d.events.record(involved, WARNINGS.includes(action.type) ? 'Warning' : 'Normal', action.type, message);
    }
    return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
  };
}

async function ensureServices(d: ClusterReconcilerDeps, a: ClusterAddress, uid: string): Promise<void> {
  for (const svc of [peerService(a, uid), clientService(a, uid)]) {
    if (d.services.get(a.namespace, svc.metadata?.name ?? '')) continue;
    await d.transport.call('POST', `/api/v1/namespaces/${a.namespace}/services`, svc).catch(ignoreStatus(409));
  }
}

async function ensureDisruptionBudget(d: ClusterReconcilerDeps, a: ClusterAddress, uid: string, minAvailable: number): Promise<void> {
  const existing = d.budgets.get(a.namespace, a.cluster);
  const path = `/apis/policy/v1/namespaces/${a.namespace}/poddisruptionbudgets`;
  if (!existing) {
    await d.transport.call('POST', path, memberDisruptionBudget(a, uid, minAvailable)).catch(ignoreStatus(409));
  } else if (existing.spec?.minAvailable !== minAvailable) {
    await d.transport.call('PATCH', `${path}/${a.cluster}`, { spec: { minAvailable } }, 'application/merge-patch+json');
  }
}

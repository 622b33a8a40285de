import { hostname } from 'node:os';
import { isDeepStrictEqual } from 'node:util';
import { setMaxListeners } from 'node:events';
import type { Server } from 'node:http';
import type { V1Node, V1PersistentVolumeClaim, V1Pod, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import type { Logger } from './runtime/log.js';
import { ApiTransport } from './runtime/transport.js';
import { Reflector } from './runtime/reflector.js';
import { Controller, generationChanged } from './runtime/controller.js';
import type { Reconcile } from './runtime/controller.js';
import { LeaderElector } from './runtime/leader-election.js';
import { EventRecorder } from './runtime/events.js';
import { RuntimeMetrics } from './runtime/metrics.js';
import { startHealthServer } from './runtime/health-server.js';
import { GROUP, VERSION } from './api/etcd-cluster.js';
import type { EtcdBackup, EtcdRestore } from './api/etcd-backup.js';
import { restoreKeysOf, restoreReconciler } from './controllers/restore/reconciler.js';
import { LeaseHolds } from './controllers/restore/lease-hold.js';
import { backupReconciler } from './controllers/backup/reconciler.js';
import { ChangeLogs } from './controllers/backup/change-logs.js';
import type { EtcdCluster } from './api/etcd-cluster.js';
import { EtcdClient } from './etcd/client.js';
import { resolverLookup } from './etcd/dns-lookup.js';
import { ANNOTATION_RESTORED_BY, APP, CLUSTER_LABEL, labelSelector } from './k8s/labels.js';
import { clusterReconciler } from './controllers/cluster/reconciler.js';
import { readinessChanged } from './controllers/cluster/views.js';
import { owningClusterName } from './k8s/owner.js';
import { nodeState } from './k8s/node-state.js';
import { EtcdClients } from './controllers/cluster/tls.js';
import { NamedSecrets } from './controllers/cluster/named-secrets.js';
import type { ApiCredentials } from './runtime/credentials.js';
import type { AutoTlsPolicy } from './controllers/cluster/tls.js';

export interface OperatorOptions {
  /** The API server and the operator's credentials for it. */
  credentials: ApiCredentials;
  /** Watch one namespace, or every namespace when undefined. */
  namespace?: string;
  metricsHost: string;
  metricsPort: number;
  /** Lease namespace for leader election; no election when undefined. */
  leaseNamespace?: string;
  identity?: string;
  /** A DNS server for member names, when the operator runs outside the cluster. */
  dnsServer?: string;
  clusterDomain: string;
  workers: number;
  autoTls: AutoTlsPolicy;
  /** The operator's image, for the steps it runs in pods. */
  operatorImage: string;
  /** A member that answers nothing this long is restarted on its volume or, without one, replaced. */
  replaceAfterMs: number;
  /** A member that answers nothing on a NotReady node this long is removed and replaced on a live node. */
  replaceOnNodeLossAfterMs: number;
  /** A removed member's claim is kept this long. */
  claimGraceMs: number;
  /**
   * A member pod still stopping this long after its deletion, on a live node, is held by something (a finalizer, a
   * volume that does not unmount, a hung kubelet) and named for a person.
   */
  stuckStoppingAfterMs: number;
  /**
   * A cache not known current for this long is stale, and a leader acting on it is wedged: liveness fails. A watch
   * is renewed every 15–30 s and a failing list retried within 45 s, so a working one never comes near (at least 60 s).
   */
  staleCacheAfterMs: number;
  /** The period of etcd's own comparison of the members' data. */
  corruptCheckSeconds: number;
  /** EtcdBackups may name etcdEndpoints (an etcd the operator does not manage): the installer's choice. */
  allowBackupEndpoints: boolean;
  log: Logger;
}

/** A term that ended and still has not let the process go after this long is wedged: liveness fails. */
const STEP_DOWN_BOUND_MS = 30_000;

/**
 * A member behind its leader that has come no closer to its log for this long is stalled: a learner is removed if a
 * repair waits on it, else a person is told. Long enough for a snapshot of the largest database (8 GiB) to be sent
 * and applied at some 15 MB/s, during which its raft index does not move.
 */
const STALLED_AFTER_MS = 600_000;

/** The key of the EtcdCluster a member pod belongs to, if it is one's. */
const clusterKeyOf = (p: V1Pod): string[] => {
  const owner = owningClusterName(p);
  return owner ? [`${p.metadata?.namespace ?? ''}/${owner}`] : [];
};

/** Node changes that matter to members: lost or back, cordoned or not (not every heartbeat of its status). */
const nodeStateChanged = (old: V1Node, now: V1Node): boolean => !isDeepStrictEqual(nodeState(old), nodeState(now));

/** Runs the operator until the signal aborts, or until leadership is lost (then a restart stands again). */
export async function runOperator(o: OperatorOptions, signal: AbortSignal): Promise<void> {
  const metrics = new RuntimeMetrics();
  const transport = new ApiTransport(o.credentials, metrics.apiRequestAnswered);
  const identity = o.identity ?? `${hostname()}-${process.pid}`;
  let term: Term | undefined;
  let endedAt: number | undefined;
  const health: Server = await startHealthServer({
    host: o.metricsHost, port: o.metricsPort, registry: metrics.registry,
    // A standby replica is ready as it stands: its caches start only once it leads, and a Deployment's rolling
    // update waits for the new replica to be ready while the old one still holds the lease.
    ready: () => term?.synced() ?? true,
    live: () => {
      const since = endedAt === undefined ? 0 : performance.now() - endedAt;
      if (since >= STEP_DOWN_BOUND_MS) return `leadership ended ${Math.round(since / 1000)} s ago and the work has not stopped`;
      return endedAt === undefined ? term?.stale(o.staleCacheAfterMs) : undefined;
    },
  });
  o.log.info({ address: health.address(), namespace: o.namespace ?? '(all)', identity }, 'etcd-operator started');

  // Everything a term does goes through a transport and etcd clients cut off when it ends: no request it made
  // is still waiting for an answer, to act on, once a successor may lead.
  const work = async (active: AbortSignal): Promise<void> => {
    metrics.leading(true);
    active.addEventListener('abort', () => {
      metrics.leading(false);
      endedAt = performance.now();
      o.log.info({ reason: String(active.reason) }, 'term ended; stopping its work');
    }, { once: true });
    term = startTerm(o, transport.within(active), active, metrics, identity);
    await term.done;
  };
  try {
    if (!o.leaseNamespace) {
      await work(signal);
      return;
    }
    const elector = new LeaderElector(transport, {
      namespace: o.leaseNamespace, leaseName: 'etcd-operator', identity,
      onError: (err) => { o.log.warn({ err }, 'leader election'); },
    });
    await elector.run(signal, (leading) => {
      o.log.info('leading');
      return work(leading);
    });
  } finally {
    health.close();
    transport.agent.destroy();
    o.log.info('etcd-operator stopped');
  }
}

/** What a leader runs: the caches and the controllers, for as long as `active` holds. */
interface Term {
  synced(): boolean;
  /** Which caches have not been known current for `boundMs`, or undefined if none. */
  stale(boundMs: number): string | undefined;
  /** Resolves once every reconcile in flight has ended and every watch is closed. */
  done: Promise<void>;
}

function startTerm(o: OperatorOptions, transport: ApiTransport, active: AbortSignal, metrics: RuntimeMetrics, identity: string): Term {
  const scope = (group: string): string => (o.namespace ? `${group}/namespaces/${o.namespace}` : group);
  const members = labelSelector({ app: APP });
  const onError = (what: string) => (err: unknown): void => { o.log.warn({ err, watch: what }, 'watch failed; retrying'); };
  const clusters = new Reflector<EtcdCluster>(transport, { path: `${scope(`/apis/${GROUP}/${VERSION}`)}/etcdclusters`, onError: onError('etcdclusters') });
  const pods = new Reflector<V1Pod>(transport, { path: `${scope('/api/v1')}/pods`, labelSelector: members, onError: onError('pods') });
  const claims = new Reflector<V1PersistentVolumeClaim>(transport, { path: `${scope('/api/v1')}/persistentvolumeclaims`, labelSelector: members, onError: onError('pvcs') });
  const services = new Reflector<V1Service>(transport, { path: `${scope('/api/v1')}/services`, labelSelector: members, onError: onError('services') });
  const budgets = new Reflector<V1PodDisruptionBudget>(transport, { path: `${scope('/apis/policy/v1')}/poddisruptionbudgets`, labelSelector: members, onError: onError('pdbs') });
  const backups = new Reflector<EtcdBackup>(transport, { path: `${scope(`/apis/${GROUP}/${VERSION}`)}/etcdbackups`, onError: onError('etcdbackups') });
  const restores = new Reflector<EtcdRestore>(transport, { path: `${scope(`/apis/${GROUP}/${VERSION}`)}/etcdrestores`, onError: onError('etcdrestores') });
  // Nodes are cluster-scoped: read-only rights on them are the operator's only cluster-wide ones in a namespaced install.
  const nodes = new Reflector<V1Node>(transport, { path: '/api/v1/nodes', onError: onError('nodes') });
  const reflectors = [clusters, pods, claims, services, budgets, backups, restores, nodes];
  const etcdOptions = { timeoutMs: 2000, signal: active, ...(o.dnsServer ? { lookup: resolverLookup(o.dnsServer) } : {}) };

  // Secrets are never listed or watched (see NamedSecrets): an auto-TLS Secret someone deletes is made again by
  // the cluster's next whole pass (within WHOLE_LOOK_EVERY_MS, and a minute's cache).
  const secrets = new NamedSecrets(transport);
  const etcdClients = new EtcdClients(new EtcdClient(etcdOptions), (tls) => new EtcdClient({ ...etcdOptions, tls }), secrets);
  const events = new EventRecorder(transport, { component: 'etcd-operator', instance: identity, onError: (err) => { o.log.warn({ err }, 'event not recorded'); } });
  const controllerOf = (name: string, reconcile: Reconcile): Controller => new Controller({
    name, workers: o.workers, log: o.log, reconcile,
    queueObserver: metrics.queueObserver(name), reconcileObserver: metrics.reconcileObserver(name),
  });
  const clusterController = controllerOf('etcdcluster', clusterReconciler({
    transport, etcdClients, events,
    clusters: clusters.store, pods: pods.store, claims: claims.store, services: services.store, budgets: budgets.store, secrets, nodes: nodes.store,
    restores: restores.store, backups: backups.store, metrics: metrics.clusters.observer, memberPods: { image: o.operatorImage, corruptCheckSeconds: o.corruptCheckSeconds }, autoTls: o.autoTls, clusterDomain: o.clusterDomain,
    settings: { replaceAfterMs: o.replaceAfterMs, replaceOnNodeLossAfterMs: o.replaceOnNodeLossAfterMs, claimGraceMs: o.claimGraceMs, learnerMaxLag: 1000, stuckStoppingAfterMs: o.stuckStoppingAfterMs, stalledAfterMs: STALLED_AFTER_MS },
  })).watches(clusters, generationChanged).owns(pods, 'EtcdCluster').owns(services, 'EtcdCluster').owns(budgets, 'EtcdCluster')
    // A claim may carry no owner reference (kept when its cluster is deleted): its labels name the cluster.
    .maps(claims, (c) => c.metadata?.labels?.[CLUSTER_LABEL])
    // A point-in-time restore replayed to its point lets its cluster's clients in (the client Service is made then).
    .maps(restores, (r) => r.spec.etcdCluster.name)
    // A node lost, cordoned or back: every cluster with a member pod on it looks again.
    .fansOut(nodes, (n) => pods.store.list().filter((p) => p.spec?.nodeName === n.metadata?.name).flatMap(clusterKeyOf), nodeStateChanged);
  const backupController = controllerOf('etcdbackup', backupReconciler({
    transport, events, etcdClients, backups: backups.store, clusters: clusters.store, restores: restores.store, pods: pods.store, clusterDomain: o.clusterDomain,
    operatorImage: o.operatorImage, metrics: metrics.backupObserver, changeLogs: new ChangeLogs(active), allowEndpoints: o.allowBackupEndpoints,
  })).watches(backups, generationChanged).owns(pods, 'EtcdBackup');
  const restoreController = controllerOf('etcdrestore', restoreReconciler({
    transport, events, restores: restores.store, clusters: clusters.store, pods: pods.store, services: services.store, etcdClients, clusterDomain: o.clusterDomain,
    leaseHolds: new LeaseHolds(active, o.log),
  }))
    .watches(restores, generationChanged)
    // A restore is Completed once its cluster is Available: told by the cluster's change, not found by its next poll.
    .maps(clusters, (c) => c.metadata.annotations?.[ANNOTATION_RESTORED_BY])
    // And once it serves: its members Ready (the cluster's status can say Running before the kubelet has a pod
    // Ready), its client Service made (updates of a Service say nothing of its routing).
    .fansOut(pods, (p) => restoreKeysOf(p, clusters.store), readinessChanged)
    .fansOut(services, (s) => restoreKeysOf(s, clusters.store), () => false);

  // Every reflector, controller and request in flight (API and etcd) listens for the end of the term: as many as
  // the load makes, each removed when its request ends, so Node's leak warning (at 10) would only be noise.
  setMaxListeners(0, active);
  const run = async (): Promise<void> => {
    const watching = reflectors.map((r) => r.run(active));
    const synced = await Promise.all(reflectors.map((r) => r.waitForSync(active)));
    if (synced.every(Boolean)) {
      o.log.info('caches synced; reconciling');
      await Promise.all([clusterController, backupController, restoreController].map((c) => c.run(active)));
    }
    await Promise.all(watching);
  };
  const stale = (boundMs: number): string | undefined => {
    const behind = reflectors.map((r) => ({ path: r.path, ms: r.staleForMs() })).filter((r) => r.ms >= boundMs)
      .map((r) => `${r.path} (${Math.round(r.ms / 1000)} s)`);
    return behind.length === 0 ? undefined : `caches not known current: ${behind.join(', ')}`;
  };
  return { synced: () => reflectors.every((r) => r.hasSynced), stale, done: run() };
}

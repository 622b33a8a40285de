import type { V1Endpoints } from '@kubernetes/client-node';
import { ApiError, getIfExists } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';

/** The Endpoints object the CoreOS etcd-operator (v0.9) holds as its leader lock, in its own namespace. */
export const COREOS_LOCK = 'etcd-operator';
/** Where client-go's Endpoints lock keeps its record. */
const LEADER_ANNOTATION = 'control-plane.alpha.kubernetes.io/leader';
/** On an EtcdCluster a cluster-wide CoreOS operator manages (-cluster-wide): its lock is in that operator's namespace. */
const COREOS_SCOPE = 'etcd.database.coreos.com/scope';
/** Where a person says that namespace is, for a cluster-wide CoreOS operator. */
export const ANNOTATION_COREOS_OPERATOR_NAMESPACE = 'etcd.database.coreos.com/coreos-operator-namespace';
/**
 * A running CoreOS operator renews its lock every 2 s (lease 15 s). One whose record has not changed for this long, or
 * three of its lease durations if longer, is stopped: it never hands its lock back.
 */
const QUIET_FOR_MS = 60_000;

interface LeaderRecord { holderIdentity?: string; leaseDurationSeconds?: number }

const stopIt = 'delete its Deployment (kubectl delete deployment etcd-operator in its namespace): two operators must never act on one cluster';

/**
 * Whether the CoreOS operator may still act, by its leader lock, judged as client-go judges a lease: by when this
 * process saw the record change, on its own monotonic clock, never by the renewer's wall time (clocks differ).
 */
export class CoreosLockWatch {
  /** Per namespace: the record last read, when it was first read, and when it was last seen to change (if ever). */
  private readonly seen = new Map<string, { record: string; firstSeenAtMs: number; changedAtMs?: number }>();

  /**
   * What a person must know, if the CoreOS operator may still act on clusters of `namespace` (its lock's namespace);
   * undefined when it is stopped. A record seen for the first time counts as just renewed when `firstSightCounts`
   * (before a takeover: wait and see); after one, only a change seen counts (a restart of this operator does not
   * hold every cluster it took over for a minute).
   */
  observe(namespace: string, lock: V1Endpoints | undefined, nowMs: number, firstSightCounts: boolean): string | undefined {
    const raw = lock?.metadata?.annotations?.[LEADER_ANNOTATION];
    let record: LeaderRecord;
    try {
      record = raw === undefined ? {} : (JSON.parse(raw) as LeaderRecord);
    } catch {
      return `the CoreOS etcd-operator's leader lock (Endpoints ${COREOS_LOCK} in ${namespace}) holds a record that cannot be read: whether that operator still runs is unknown; ${stopIt}, then delete that Endpoints object`;
    }
    if (!raw || !record.holderIdentity) {
      this.seen.delete(namespace);
      return undefined;
    }
    const before = this.seen.get(namespace);
    const entry = before === undefined ? { record: raw, firstSeenAtMs: nowMs }
      : before.record === raw ? before : { ...before, record: raw, changedAtMs: nowMs };
    this.seen.set(namespace, entry);
    // Clusters of one namespace share the lock: whichever asks first, a first sight is remembered as one.
    const activeAtMs = Math.max(entry.changedAtMs ?? -Infinity, firstSightCounts ? entry.firstSeenAtMs : -Infinity);
    const quietMs = Math.max(QUIET_FOR_MS, 3 * (record.leaseDurationSeconds ?? 0) * 1000);
    if (nowMs - activeAtMs >= quietMs) return undefined;
    const since = entry.changedAtMs === nowMs ? 'renewed since it was last read'
      : entry.changedAtMs === undefined && entry.firstSeenAtMs === nowMs ? 'first read now' : `unchanged for ${Math.round((nowMs - activeAtMs) / 1000)} s`;
    return `the CoreOS etcd-operator may still run: ${record.holderIdentity} holds its leader lock (Endpoints ${COREOS_LOCK} in ${namespace}), `
      + `${since}; it counts as stopped once unchanged for ${quietMs / 1000} s. If it runs, ${stopIt}`;
  }
}

/**
 * Reads the CoreOS operator's lock for a cluster: in the cluster's namespace (CoreOS's default), or in the one a
 * person named for a cluster-wide CoreOS operator. A lock that cannot be read leaves it unknown, which is not "stopped".
 */
export async function coreosOperatorActivity(transport: ApiTransport, watch: CoreosLockWatch, cluster: EtcdCluster, nowMs: number, firstSightCounts: boolean): Promise<string | undefined> {
  const annotations = cluster.metadata.annotations ?? {};
  const namespace = annotations[ANNOTATION_COREOS_OPERATOR_NAMESPACE] ?? (annotations[COREOS_SCOPE] === 'clusterwide' ? undefined : cluster.metadata.namespace);
  if (namespace === undefined) {
    return `a cluster-wide CoreOS etcd-operator made this cluster (annotation ${COREOS_SCOPE}: clusterwide), and its leader lock is in its own namespace: `
      + `name it (kubectl annotate etcdcluster ${cluster.metadata.name} ${ANNOTATION_COREOS_OPERATOR_NAMESPACE}=<namespace>) so that this operator can see whether it still runs`;
  }
  try {
    return watch.observe(namespace, await getIfExists<V1Endpoints>(transport, `/api/v1/namespaces/${namespace}/endpoints/${COREOS_LOCK}`), nowMs, firstSightCounts);
  } catch (err) {
    if (!(err instanceof ApiError && err.status === 403)) throw err;
    return `whether the CoreOS etcd-operator still runs is unknown: this operator may not read its leader lock (Endpoints ${COREOS_LOCK} in ${namespace}); grant it get on that object`;
  }
}

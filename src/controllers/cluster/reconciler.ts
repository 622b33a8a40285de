import { isDeepStrictEqual } from 'node:util';
import type { V1Node, V1PersistentVolume, V1PersistentVolumeClaim, V1Pod, V1PodDisruptionBudget, V1Service } from '@kubernetes/client-node';
import { getIfExists, ignoreStatus, refusedAsMade } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import type { Reconcile, ReconcileContext, ReconcileResult } from '../../runtime/controller.js';
import type { Store } from '../../runtime/store.js';
import type { EventRecorder } from '../../runtime/events.js';
import { writeStatus } from '../../runtime/status.js';
import { rfc3339 } from '../../runtime/time.js';
import { GROUP, VERSION, clusterPath } from '../../api/etcd-cluster.js';
import type { ClusterStatus, EtcdCluster } from '../../api/etcd-cluster.js';
import { clientUrl } from '../../etcd/identity.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import type { EtcdClient } from '../../etcd/client.js';
import type { MemberTls, OperatorPodSettings, RestoreSource } from '../../k8s/member-pod.js';
import { ANNOTATION_RESTORED_BY, clusterLabels, labelSelector } from '../../k8s/labels.js';
import { CoreosLockWatch, coreosOperatorActivity } from './coreos-lock.js';
import { clientsHeld } from '../restore/clients-held.js';
import type { EtcdBackup, EtcdRestore } from '../../api/etcd-backup.js';
import { revisionBumpOf } from '../../api/etcd-backup.js';
import { gatesToOpen, openVoterGates } from './voter-gate.js';
import { membersBehind, plan } from '../../etcd/planner.js';
import type { Action } from '../../etcd/planner.js';
import { RefusedSteps } from './refused-steps.js';
import { clientService, metricsService, metricsServiceName, metricsServiceOfAnother, peerService } from '../../k8s/services.js';
import { budgetChange, budgetMinAvailable, memberDisruptionBudget } from '../../k8s/disruption-budget.js';
import { nodeState } from '../../k8s/node-state.js';
import { strandedClaims } from './stranded-claims.js';
import { growClaims } from './volume-growth.js';
import { SpreadAttempts, freeNodes, hardPlacement, spreadSituation } from './placement.js';
import { observeEtcd } from './observe.js';
import { STEADY_LOOK_MS, everyMemberAnswered, execute, pollingBounded } from './execute.js';
import { SteadyLooks, nothingTimed } from './steady-look.js';
import { irreversible } from './irreversible.js';
import { actionEvent } from './action-event.js';
import type { Outcome } from './execute.js';
import { etcdStarted } from './pod-trouble.js';
import { conditionEvents } from './condition-events.js';
import { clusterState, madeByCoreOS, memberHealth, memberView } from './views.js';
import type { Observed, PlannerSettings, RebuildSource, Timings } from './views.js';
import { Durations } from '../../runtime/durations.js';
import { Progress } from '../../runtime/progress.js';
import { memberName } from '../../etcd/client.js';
import { clusterStatus, misconfigured } from './status.js';
import { actionTaken, healthReading } from './health-reading.js';
import type { ClusterObserver } from '../../runtime/cluster-metrics.js';
import type { Refusal } from './status.js';
import { ConfigurationError, ensureAutoTls, requireStaticTls } from './tls.js';
import type { AutoTls, AutoTlsPolicy, EtcdClients } from './tls.js';
import type { NamedSecrets } from './named-secrets.js';
import { clusterAddress, tlsSecretNames } from '../../k8s/tls-secrets.js';
import { claimRetention, removedForMs } from '../../k8s/member-claim.js';
import { isVerificationCluster } from '../../k8s/owner.js';
import { claimMarks, claimsOf, ensureClaimOwnership, recordStarts, sortClaims } from './claims.js';
import type { SortedClaims } from './claims.js';
import { siblingPath } from '../../storage/locate.js';

export interface ClusterReconcilerDeps {
  transport: ApiTransport;
  etcdClients: EtcdClients;
  events: EventRecorder;
  clusters: Store<EtcdCluster>;
  pods: Store<V1Pod>;
  claims: Store<V1PersistentVolumeClaim>;
  services: Store<V1Service>;
  budgets: Store<V1PodDisruptionBudget>;
  /** The cluster's nodes: whether a member's node is lost or being drained. */
  nodes: Store<V1Node>;
  /** The TLS Secrets clusters name (static) or the operator makes (auto), read by name. */
  secrets: NamedSecrets;
  restores: Store<EtcdRestore>;
  backups: Store<EtcdBackup>;
  /** What every member pod gets from the operator. */
  memberPods: OperatorPodSettings;
  autoTls: AutoTlsPolicy;
  clusterDomain: string;
  settings: PlannerSettings;
  metrics: ClusterObserver;
}

const QUIET: Action['type'][] = ['Wait', 'Steady', 'Paused', 'MarkBootstrapped'];
/** Taken because a quorum is lost: no member can answer a linearizable read then, so the survivors' own lists are read. */
const WITHOUT_QUORUM: Action['type'][] = ['StartRebuild', 'StartSurvivorRecovery', 'RestartSurvivor'];

/** The one key the cluster-wide silence is timed under. */
const UNHEARD = 'no member list';

/** reconcile(namespace/name) for EtcdCluster: one planned action per pass, then the status that follows. */
export function clusterReconciler(d: ClusterReconcilerDeps): Reconcile {
  const silence = new Durations();
  const lostNode = new Durations();
  const spreading = new SpreadAttempts();
  const unclaimed = new Durations();
  const stopping = new Durations();
  const catchUp = new Progress();
  const unheard = new Durations();
  const polled = new Durations();
  /** etcd's last "not now" per cluster, and the step it was to: logged once, not on every retry. */
  const refusedSteps = new RefusedSteps();
  /** The CoreOS operator's leader locks, as this process has seen them change. */
  const coreosLocks = new CoreosLockWatch();
  const steadyLooks = new SteadyLooks();
  return async (key: string, { log, timedOnly }: ReconcileContext): Promise<ReconcileResult | undefined> => {
    const [namespace = '', name = ''] = key.split('/');
    const cluster = d.clusters.get(namespace, name);
    // Gone: everything it made carries its owner reference, and the garbage collector removes it; member
    // claims only under the Delete retention policy (by default they stay, for a cluster of the name to adopt).
    if (!cluster?.metadata.uid || cluster.metadata.deletionTimestamp) {
      for (const timer of [silence, lostNode, unclaimed, stopping, catchUp, unheard, polled]) timer.forget(key);
      spreading.forget(key);
      refusedSteps.forget(key);
      steadyLooks.forget(key);
      d.metrics.gone(namespace, name);
      return undefined;
    }
    const uid = cluster.metadata.uid;
    const tlsNames = tlsSecretNames(name, cluster.spec);
    // Nothing the controller is told of changed since a whole pass found it steady: its leader alone is asked
    // whether etcd did.
    if (timedOnly && steadyLooks.has(key)) {
      const client = await d.etcdClients.forCluster(namespace, tlsNames).catch(() => undefined);
      if (client && await steadyLooks.unchanged(key, cluster.metadata.resourceVersion, client, performance.now())) {
        if (!isVerificationCluster(cluster)) d.metrics.confirmed(namespace, name);
        return { requeueAfterMs: STEADY_LOOK_MS };
      }
    }
    steadyLooks.forget(key);
    const address = clusterAddress(name, namespace, cluster.spec, d.clusterDomain);

    const path = clusterPath(namespace, name);
    const involved = { apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', name, namespace, uid };

    const pods = d.pods.ownedBy(uid);
    // A cluster the CoreOS operator made, not taken over yet, is not this operator's: nothing of it is written but its
    // status (its claims, Services and budget stay as that operator left them) until the takeover.
    const takeoverPending = !cluster.status?.bootstrapped && pods.some(madeByCoreOS);
    const labelled = d.claims.withLabels(clusterLabels(name), namespace);
    // First, so that nothing failing below keeps a claim looking empty: a claim whose member's etcd ran holds data.
    const markedByPods = takeoverPending ? [] : await recordStarts(d.transport, address, claimsOf(labelled, uid), (member) => pods.some((p) => p.metadata?.name === member && etcdStarted(p)));

    // A backup verification's disposable cluster is neither scraped nor reported.
    const monitored = !isVerificationCluster(cluster);
    const restoredBy = cluster.metadata.annotations?.[ANNOTATION_RESTORED_BY];
    if (!takeoverPending) await ensureServices(d, address, uid, clientsHeld(cluster, restoredBy ? d.restores.get(namespace, restoredBy) : undefined), monitored);
    let tls: MemberTls | undefined;
    let autoTls: AutoTls | undefined;
    let etcd: EtcdClient;
    let restore: RestoreSource | undefined;
    try {
      if (tlsNames && !tlsNames.auto) await requireStaticTls(d.secrets, namespace, tlsNames);
      autoTls = tlsNames?.auto ? await ensureAutoTls(d.secrets, address, uid, tlsNames, d.autoTls, Date.now(), pods.length) : undefined;
      tls = tlsNames ? { secrets: tlsNames, generation: autoTls?.generation ?? '' } : undefined;
      etcd = await d.etcdClients.forCluster(namespace, tlsNames);
      restore = cluster.status?.bootstrapped ? undefined : restoreSource(d, cluster);
    } catch (err) {
      if (!(err instanceof ConfigurationError)) throw err;
      // Nothing is touched until the user fixes it; the condition and the event say what is wrong.
      await writeStatus<ClusterStatus, EtcdCluster>(d.transport, path, cluster, (current) => misconfigured(current, err, rfc3339(Date.now())));
      await d.events.record(involved, 'Warning', err.reason, err.message);
      if (monitored) d.metrics.misconfigured(namespace, name);
      return { requeueAfterMs: 30_000 };
    }
    const claims = sortClaims(labelled, uid, cluster.status?.bootstrapped ?? false, restore === undefined);
    if (!takeoverPending) await ensureClaimOwnership(d.transport, address, uid, claimRetention(cluster.spec), claims.own, cluster.status?.bootstrapped ?? false);
    const cachedNode = (n: string): Promise<V1Node | undefined> => Promise.resolve(d.nodes.get(undefined, n));
    const cached = await observe(pods, nodesOf(pods, cachedNode), claims, strandedClaims(claims.own, anyShutDown(), cachedNode, readVolume), etcd, address, false);
    // etcd lists a member by its name once it has started, which a pod's cached status may not show yet.
    const startedMembers = (cached.etcdView.members ?? []).filter((m) => m.name !== '').map(memberName);
    if (!takeoverPending) await recordStarts(d.transport, address, claims.own, (member) => !markedByPods.includes(member) && startedMembers.includes(member));
    // Not an action of the plan: it changes nothing in etcd, only lets clients reach members that are voters.
    await openVoterGates(d.transport, gatesToOpen(pods, cached.etcdView.members), Date.now());
    const timings = clock(key, cached.observed, claims, performance.now(), cluster.status?.noSpaceDisarmedAt);
    const free = freeNodes(cluster.spec, pods, d.nodes.list());
    const situation = spreadSituation(pods, free);
    const spreadTo = spreading.allowed(key, situation, performance.now()) ? free : undefined;
    const placeableNodes = hardPlacement(cluster.spec, d.nodes.list());
    // Read only for a cluster the CoreOS operator made, waiting to be taken over or taken over: the one question it answers.
    const coreosActivity = takeoverPending || cluster.status?.takenOver
      ? await coreosOperatorActivity(d.transport, coreosLocks, cluster, performance.now(), takeoverPending) : undefined;
    const state = clusterState(cluster, cached.observed, d.settings, timings, { tls, backup: latestBackup(d, cluster, Date.now()), restore, spreadTo, placeableNodes, coreosOperatorActivity: coreosActivity });
    const action = plan(state);
    if (irreversible(action)) {
      // The caches may lag (a stalled watch, a write of this operator's not yet seen): an action that cannot be
      // undone is taken only if a fresh read of the API and of etcd's member list (linearizable while a quorum
      // can give one) plans it again.
      const again = await confirm(cluster, etcd, address, timings, tls, !WITHOUT_QUORUM.includes(action.type), coreosActivity);
      if (!isDeepStrictEqual(again, action)) {
        log.info({ action, fresh: again }, 'not confirmed by a fresh observation; looking again');
        return { requeueAfterMs: 1000 };
      }
    }
    if (!QUIET.includes(action.type)) {
      if (refusedSteps.retrying(key, action)) log.debug({ action }, 'acting again');
      else log.info({ action }, 'acting');
    }
    // The member acted on is named: "RemoveMember example-1a2b3c4d: …" says whom, not only why.
    const what = 'member' in action ? `${action.type} ${action.member}` : action.type;
    const told = 'reason' in action ? `${what}: ${action.reason}` : what;
    let refusal: Refusal | undefined;
    const outcome = await execute(action, { transport: d.transport, etcd, cluster, address, pods, operator: d.memberPods, ...cached.etcdView, ...(tls ? { tls } : {}), ...(restore ? { restore } : {}), log })
      .catch(async (err: unknown): Promise<Outcome> => {
        // What the spec made, refused by the API server (a missing PriorityClass, a quota, a value admission
        // could not check): the user's to fix. Status and an Event say so; it is tried again slowly.
        if (refusedAsMade(err)) {
          refusal = { reason: 'Refused', message: `${told}: the API server refused it: ${err.message}` };
          return { requeueAfterMs: 30_000 };
        }
        // An answer lost (a timeout) may hide a change that was made: the Event says it was tried.
        if (!QUIET.includes(action.type)) await d.events.record(involved, 'Warning', action.type, `${told}; no answer came (${(err as Error).message}), looking again`);
        throw err;
      });
    // A move etcd refused for now (a member reconnected less than 5 s ago: "unhealthy cluster") was not made:
    // it is tried again as soon as etcd accepts, not ten minutes later as one that came to nothing; refused for a
    // minute, it counts as tried.
    if (action.type === 'AddMember' && action.spreading) {
      if (outcome.refused) spreading.refused(key, situation, performance.now());
      else spreading.tried(key, situation, performance.now());
    }
    const news = refusedSteps.record(key, action, outcome.refused, performance.now());
    if (news?.kind === 'refused') {
      const refusedBy = action.type === 'PatchPodMetadata' ? 'the pod changed since it was observed; patching it anew' : 'etcd refused for now; retrying until it accepts';
      log.info({ action: action.type, refusal: news.refusal }, refusedBy);
    } else if (news?.kind === 'accepted') {
      log.info({ action, attempts: news.attempts, waitedMs: Math.round(news.waitedMs) }, 'taken after refusals');
    }
    if (!takeoverPending) await ensureDisruptionBudget(d, address, uid, budgetMinAvailable(cluster.spec.size, (state.members ?? []).length));
    const growing = cluster.status?.conditions?.some((c) => c.type === 'VolumeGrowth') ?? false;
    const grown = takeoverPending ? undefined : await growClaims(d.transport, address, cluster.spec, claims.own, growing);

    // The status computed last (written, or found stored already) is what the metrics report too.
    let reported: ClusterStatus | undefined;
    const written = await writeStatus<ClusterStatus, EtcdCluster>(d.transport, path, cluster,
      (current) => (reported = clusterStatus(current, state, action, cached.etcdView.statuses, rfc3339(Date.now()), { refusal, volumeGrowth: grown?.condition, claimedStorage: grown?.claimed })));
    if (reported && monitored) d.metrics.observed(namespace, name, healthReading(state, reported));
    // Steady with every member answering, nothing being timed (a claim's grace, a member's silence: the plan
    // changes with time alone), and the status as it was (none written: the object's version is the one seen).
    // No refusal and no takeover pending go with Steady anyway; said here for the reader. The next whole look
    // comes by the certificates' renewal.
    if (action.type === 'Steady' && everyMemberAnswered({ pods, ...cached.etcdView }) && nothingTimed(timings) && !written && !refusal && !takeoverPending) {
      steadyLooks.record(key, cluster.metadata.resourceVersion, cached.etcdView.statuses, (member) => clientUrl(address, member), performance.now(), autoTls && autoTls.renewAtMs - Date.now());
    }
    // A member pod that cannot run, a refused create, members sharing a node, fields that do nothing.
    for (const event of conditionEvents(cluster.status, written?.status)) await d.events.record(involved, event.type, event.reason, event.message);
    const rebuilt = action.type === 'MarkBootstrapped' ? cluster.status?.rebuild : undefined;
    if (rebuilt && !rebuilt.completedAt) {
      await d.events.record(involved, 'Warning', 'RestoredFromBackup',
        `rebuilt from EtcdBackup ${rebuilt.backup ?? ''} at revision ${rebuilt.revision ?? 0}; about ${rebuilt.lostRevisions ?? 0} revisions written after it were lost`);
    }
    if (!QUIET.includes(action.type) && !outcome.refused && !refusal) {
      if (monitored) d.metrics.acted(namespace, name, actionTaken(state, action), Date.now());
      const event = actionEvent(action);
      await d.events.record(involved, event.type, event.reason, told);
    }
    return outcome.requeueAfterMs === undefined ? undefined : { requeueAfterMs: pollingBounded(polled, key, action, outcome.requeueAfterMs, performance.now()) };
  };

  /** Whether the node cache shows a node declared shut down: only then are claims' volumes read (strandedClaims). */
  function anyShutDown(): boolean {
    return d.nodes.list().some((n) => nodeState(n).shutDown);
  }

  async function readVolume(name: string): Promise<V1PersistentVolume | undefined> {
    return getIfExists<V1PersistentVolume>(d.transport, `/api/v1/persistentvolumes/${name}`);
  }

  /** The plan made anew from the cluster, its pods and claims read from the API server, and etcd's member list (linearizable if asked). */
  async function confirm(cluster: EtcdCluster, etcd: EtcdClient, address: ClusterAddress, timings: Timings, tls: MemberTls | undefined, linearizable: boolean, coreosOperatorActivity: string | undefined): Promise<Action> {
    const { namespace, name, uid = '' } = cluster.metadata;
    const selector = encodeURIComponent(labelSelector(clusterLabels(name)));
    const list = async <T extends V1Pod | V1PersistentVolumeClaim>(resource: string): Promise<T[]> =>
      ((await d.transport.call('GET', `/api/v1/namespaces/${namespace}/${resource}?labelSelector=${selector}`)) as { items: T[] }).items;
    const fresh = (await d.transport.call('GET', clusterPath(namespace, name))) as EtcdCluster;
    const pods = (await list<V1Pod>('pods')).filter((o) => o.metadata?.ownerReferences?.some((r) => r.uid === uid));
    const bootstrapped = fresh.status?.bootstrapped ?? false;
    const restore = bootstrapped ? undefined : restoreSource(d, fresh);
    const claims = sortClaims(await list<V1PersistentVolumeClaim>('persistentvolumeclaims'), uid, bootstrapped, restore === undefined);
    const node = (n: string): Promise<V1Node | undefined> => getIfExists<V1Node>(d.transport, `/api/v1/nodes/${n}`);
    const { observed } = await observe(pods, nodesOf(pods, node), claims, strandedClaims(claims.own, anyShutDown(), node, readVolume), etcd, address, linearizable);
    // The nodes as the cache has them: an action is confirmed against fresh objects of the cluster, not of its nodes.
    const placeableNodes = hardPlacement(fresh.spec, d.nodes.list());
    return plan(clusterState(fresh, observed, d.settings, timings, { tls, backup: latestBackup(d, fresh, Date.now()), restore, placeableNodes, coreosOperatorActivity }));
  }

  /**
   * Times, on this process's clock, each listed member's silence (per pod: a new pod starts afresh), its
   * silence on a lost node (stopping pods too: one on a lost node never stops), each pod stopping, each member
   * behind its leader coming no closer (per pod), and each claim of no member (per claim). Without a member list
   * none is judged, and all start again. All of it is in memory: an operator that restarts (or a standby
   * that takes over) counts each afresh, which only ever delays the rule that acts on it, never hastens it.
   */
  function clock(scope: string, o: Observed, claims: SortedClaims, nowMs: number, noSpaceDisarmedAt: string | undefined): Timings {
    const listed = new Set((o.members ?? []).map(memberName));
    const unanswering = o.members ? o.pods.filter((p) => listed.has(p.metadata?.name ?? '') && !o.statuses.has(p.metadata?.name ?? '')) : [];
    const silent = unanswering.filter((p) => !p.metadata?.deletionTimestamp);
    const stranded = unanswering.filter((p) => nodeState(o.nodes.get(p.spec?.nodeName ?? '')).lost);
    const orphaned = o.members ? claims.own.filter((c) => !listed.has(c.metadata?.name ?? '') && !o.pods.some((p) => p.metadata?.name === c.metadata?.name)) : [];
    const behind = membersBehind((o.members ?? []).map(memberView), [...o.statuses].map(([name, s]) => memberHealth(name, s)), d.settings.learnerMaxLag);
    const lagging = o.pods.filter((p) => behind.has(p.metadata?.name ?? '') && !p.metadata?.deletionTimestamp);
    const byName = (durations: Map<string, number>): Record<string, number> =>
      Object.fromEntries([...durations].map(([k, ms]) => [k.split(' ')[0] ?? '', ms]));
    const keyOf = (x: V1Pod | V1PersistentVolumeClaim): string => `${x.metadata?.name ?? ''} ${x.metadata?.uid ?? ''}`;
    // No member list while pods run: every member silent to the operator, timed for the cluster as a whole.
    const unheardMs = unheard.observe(scope, o.members || o.pods.length === 0 ? [] : [UNHEARD], nowMs).get(UNHEARD);
    // Recorded in status as a time of day: across operator restarts, as a claim's removal is.
    const disarmedAtMs = noSpaceDisarmedAt ? Date.parse(noSpaceDisarmedAt) : Number.NaN;
    return {
      ...(unheardMs === undefined ? {} : { unheardForMs: unheardMs }),
      ...(Number.isNaN(disarmedAtMs) ? {} : { noSpaceDisarmedForMs: Math.max(0, Date.now() - disarmedAtMs) }),
      silentForMs: byName(silence.observe(scope, silent.map(keyOf), nowMs)),
      strandedForMs: byName(lostNode.observe(scope, stranded.map(keyOf), nowMs)),
      stoppingForMs: byName(stopping.observe(scope, o.pods.filter((p) => p.metadata?.deletionTimestamp).map(keyOf), nowMs)),
      stalledForMs: byName(catchUp.observe(scope, new Map(lagging.map((p) => [keyOf(p), behind.get(p.metadata?.name ?? '') ?? Infinity])), nowMs)),
      // A removed member's claim counts from the removal recorded on it, across operator restarts.
      unclaimedForMs: Object.fromEntries(Object.entries(byName(unclaimed.observe(scope, orphaned.map(keyOf), nowMs)))
        .map(([name, ms]) => [name, Math.max(ms, ...orphaned.filter((c) => c.metadata?.name === name).map((c) => removedForMs(c, Date.now())))])),
    };
  }
}

/** The nodes the pods are scheduled to, by name, each read with `read`. */
async function nodesOf(pods: V1Pod[], read: (name: string) => Promise<V1Node | undefined>): Promise<Map<string, V1Node>> {
  const names = [...new Set(pods.map((p) => p.spec?.nodeName ?? '').filter((n) => n !== ''))];
  const nodes = await Promise.all(names.map(async (n) => [n, await read(n)] as const));
  return new Map(nodes.flatMap(([n, node]) => (node ? [[n, node] as const] : [])));
}

/** What the planner is given: the cluster's pods, their nodes and claims, and etcd's view through them. */
async function observe(pods: V1Pod[], nodes: Promise<Map<string, V1Node>>, claims: SortedClaims, stranded: Promise<string[]>, etcd: EtcdClient, address: ClusterAddress, linearizable: boolean) {
  const etcdView = await observeEtcd(etcd, address, pods, linearizable);
  const observed: Observed = {
    pods, nodes: await nodes, claims: claims.own.map((c) => c.metadata?.name ?? ''), strandedClaims: await stranded, claimMarks: claimMarks(claims.own), retained: claims.retained, ...etcdView,
  };
  return { observed, etcdView };
}

/** A backup is too old to rebuild from, unless the restore policy says otherwise, after a day. */
const MAX_BACKUP_AGE_S = 86_400;

/**
 * The newest good snapshot of the restore policy's EtcdBackup, if the policy is set and one was taken, or why
 * it is refused: older than `maxBackupAgeSeconds`, a rebuild would lose more than the policy accepts.
 */
function latestBackup(d: ClusterReconcilerDeps, cluster: EtcdCluster, nowMs: number): RebuildSource | undefined {
  const policy = cluster.spec.restorePolicy;
  const name = policy?.fromLatestBackup;
  const last = name ? d.backups.get(cluster.metadata.namespace, name)?.status : undefined;
  if (!name || !last?.lastBackup?.path || !last.lastSuccessDate) return undefined;
  const ageS = Math.round((nowMs - Date.parse(last.lastSuccessDate)) / 1000);
  const maxS = policy.maxBackupAgeSeconds ?? MAX_BACKUP_AGE_S;
  if (ageS > maxS) return { refused: `the newest backup of EtcdBackup ${name} is ${ageS} s old, older than the ${maxS} s restorePolicy.maxBackupAgeSeconds allows` };
  return { from: { backup: name, path: last.lastBackup.path, revision: last.etcdRevision ?? 0 } };
}

/** The snapshot a restored or rebuilt cluster starts from; never an empty bootstrap when one was asked for. */
function restoreSource(d: ClusterReconcilerDeps, cluster: EtcdCluster): RestoreSource | undefined {
  const rebuild = cluster.status?.rebuild;
  if (rebuild && !rebuild.completedAt) {
    const backup = d.backups.get(cluster.metadata.namespace, rebuild.backup ?? '');
    const { s3, volume, encryption } = backup?.spec ?? {};
    const keys = encryption ? { keySecret: encryption.keySecret } : {};
    // The object is named inside the backup's bucket; the file inside the backup's claim.
    if (backup?.spec.storageType === 'S3' && s3) return { s3: { ...s3, path: siblingPath(s3.path, rebuild.path ?? '') }, ...keys };
    if (backup?.spec.storageType === 'Volume' && volume) return { volume: { claimName: volume.claimName, path: rebuild.path ?? volume.path }, ...keys };
    throw new ConfigurationError('BackupMissing', `EtcdBackup ${rebuild.backup ?? ''} to rebuild from is gone; nothing is started without it`);
  }
  const by = cluster.metadata.annotations?.[ANNOTATION_RESTORED_BY];
  if (!by) return undefined;
  const restore = d.restores.get(cluster.metadata.namespace, by);
  if (!restore) throw new ConfigurationError('RestoreMissing', `EtcdRestore ${by} that this cluster is restored from does not exist; nothing is started without it`);
  const { s3, volume, encryption } = restore.spec;
  // A point-in-time restore starts from the snapshot it chose in the backup's bucket; it is recorded before the cluster is made.
  const chosen = restore.status?.pointInTime?.snapshot;
  if (restore.spec.pointInTime && !chosen) throw new ConfigurationError('RestoreNotPlanned', `EtcdRestore ${by} has not chosen its snapshot yet`);
  return {
    ...(restore.spec.backupStorageType === 'S3' && s3 ? { s3: chosen ? { ...s3, path: siblingPath(s3.path, chosen) } : s3 } : {}),
    ...(restore.spec.backupStorageType === 'Volume' && volume ? { volume } : {}),
    ...(encryption ? { keySecret: encryption.keySecret } : {}),
    revisionBump: revisionBumpOf(restore.spec),
  };
}

/** The peer Service, and the client Service unless clients are held away (a point-in-time restore not yet at its point). */
async function ensureServices(d: ClusterReconcilerDeps, a: ClusterAddress, uid: string, holdClients: boolean, monitored: boolean): Promise<void> {
  // The metrics Service's name would be the peer Service of a cluster named so: that cluster's members need it more.
  const metrics = !monitored || d.clusters.get(a.namespace, metricsServiceName(a.cluster)) ? [] : [metricsService(a, uid)];
  for (const svc of [peerService(a, uid), ...(holdClients ? [] : [clientService(a, uid)]), ...metrics]) {
    const existing = d.services.get(a.namespace, svc.metadata?.name ?? '');
    // The CoreOS operator's peer Service asks for unready addresses by an annotation EndpointSlices ignore: a member
    // added to a cluster taken over would not resolve its peers' names, nor they its own, before it is ready.
    if (svc.metadata?.name === a.cluster && existing?.spec?.clusterIP === 'None' && existing.spec.publishNotReadyAddresses !== true) {
      await d.transport.call('PATCH', `/api/v1/namespaces/${a.namespace}/services/${a.cluster}`, { spec: { publishNotReadyAddresses: true } }, 'application/merge-patch+json');
    }
    // Another cluster's metrics Service, made before this cluster was, holds its peer Service's name: this cluster's
    // members need the name to find each other, and that cluster's metrics go without (ensured above). Only a
    // Service the operator made for metrics, whose name the owner's own name gives, is ever deleted so.
    if (svc.metadata?.name === a.cluster && existing && metricsServiceOfAnother(existing, uid)) {
      await d.transport.call('DELETE', `/api/v1/namespaces/${a.namespace}/services/${a.cluster}`, { preconditions: { uid: existing.metadata?.uid } }).catch(ignoreStatus(404));
    } else if (existing) continue;
    await d.transport.call('POST', `/api/v1/namespaces/${a.namespace}/services`, svc).catch(ignoreStatus(409));
  }
}

/** Makes the budget, or brings one to `minAvailable` (and one an earlier version made to these terms). */
async function ensureDisruptionBudget(d: ClusterReconcilerDeps, a: ClusterAddress, uid: string, minAvailable: number): Promise<void> {
  const existing = d.budgets.get(a.namespace, a.cluster);
  const path = `/apis/policy/v1/namespaces/${a.namespace}/poddisruptionbudgets`;
  const change = existing ? budgetChange(existing, minAvailable) : undefined;
  if (!existing) {
    await d.transport.call('POST', path, memberDisruptionBudget(a, uid, minAvailable)).catch(ignoreStatus(409));
  } else if (change) {
    await d.transport.call('PATCH', `${path}/${a.cluster}`, change, 'application/merge-patch+json');
  }
}

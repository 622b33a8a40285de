import type { Logger } from '../../runtime/log.js';
import type { V1Pod } from '@kubernetes/client-node';
import { ApiError, ignoreStatus, refusedAsMade } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import type { Action, WaitingFor } from '../../etcd/planner.js';
import type { Durations } from '../../runtime/durations.js';
import { EtcdError, memberName } from '../../etcd/client.js';
import { compactedAway } from '../../etcd/etcd-error.js';
import type { EtcdClient, EtcdMember, EtcdStatus } from '../../etcd/client.js';
import { clientUrl, initialCluster, newMemberName, peerUrl } from '../../etcd/identity.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { WHOLE_DATABASE_PASS_SECONDS, memberPod } from '../../k8s/member-pod.js';
import { metadataPatch } from '../../k8s/pod-metadata.js';
import { ANNOTATION_CONFIG, ANNOTATION_POD_TEMPLATE } from '../../k8s/labels.js';
import type { MemberTls, OperatorPodSettings, RestoreSource } from '../../k8s/member-pod.js';
import { claimRetention, memberClaim } from '../../k8s/member-claim.js';
import { adoptClaim, claimPath, markRemoved } from './claims.js';
import type { EtcdCluster } from '../../api/etcd-cluster.js';

export interface ExecutionContext {
  transport: ApiTransport;
  etcd: EtcdClient;
  cluster: EtcdCluster;
  address: ClusterAddress;
  /** The cluster's pods as the plan observed them. */
  pods: V1Pod[];
  members?: EtcdMember[];
  statuses: Map<string, EtcdStatus>;
  tls?: MemberTls;
  operator: OperatorPodSettings;
  /** A restored cluster's bootstrap members start from this snapshot. */
  restore?: RestoreSource;
  log: Logger;
}

/** Defragmentation rewrites a whole database file; a large one takes minutes (member liveness allows as long). */
const DEFRAGMENT_TIMEOUT_MS = WHOLE_DATABASE_PASS_SECONDS * 1000;

/**
 * etcd refusals that mean "not now": the strict reconfiguration check, a learner not caught up, and a downgrade
 * asked for right after an upgrade, while the cluster version has not yet risen to the minor the members run
 * (the target is then judged two minors down), or that another pass enabled already; a cancel that another pass
 * made already, while the member asked still reported it. Retried soon, or planned no more.
 */
const TRANSIENT = /unhealthy cluster|not in sync with leader|too many learner members|can only promote a learner member which is in sync|invalid downgrade target version|downgrade job in progress|no inflight downgrade job/;

/**
 * A membership change in flight (a new member's etcd starting, a learner catching up to be promoted) is looked
 * at again this soon, not at a plain Wait's 2 s: its next step is taken as soon as etcd allows it, which is what a
 * scale-up's time is made of (issue 36). It lasts seconds; pollingBounded ends it for a step that lasts longer.
 */
export const MEMBERSHIP_POLL_MS = 250;
/**
 * For how long one such step is polled so: a member's etcd starts and a learner catches up within seconds, while a
 * pod that cannot start (an image that never pulls) or a voter that stays disconnected holds the step for as long
 * as it lasts; past this it is looked at every 2 s like any Wait (the reconciler counts it).
 */
export const MEMBERSHIP_POLL_FOR_MS = 15_000;
/** How soon a Wait is looked at again, when nothing it waits on changes meanwhile. */
export const PLAIN_WAIT_MS = 2000;
/**
 * How soon a steady cluster's etcd is looked at again when nothing in Kubernetes changes. A member that stops
 * serving fails its readiness probe, and that change of its pod wakes the reconciler at once, so this look is for
 * what no probe shows: NOSPACE (left out of readiness, so that reads go on), leadership, database sizes for the
 * status and the defragmentation policy, a member list changed by hand. Every 10 s it was most of an idle
 * operator's CPU (issue 36: 0.01–0.03 of a core with 20 clusters; 0.004 at 30 s). Between whole looks, at most
 * WHOLE_LOOK_EVERY_MS apart, a look asks the leader alone whether anything moved (steady-look.ts). The cost is
 * that NOSPACE is seen up to 30 s after etcd raised it (its recovery then takes about a second). A NOSPACE recovery that once
 * seemed to report its alarm gone at this interval was a test reading the status from before the look as
 * recovered (docs/decisions.md).
 */
export const STEADY_LOOK_MS = 30_000;
/**
 * How soon a steady cluster is looked at again while a member's pod is Ready but its etcd did not answer the
 * operator (its client port cut off from the operator's network, or slower than a status call): the time it has
 * been silent, after which it is restarted or replaced, is measured at these looks.
 */
export const UNANSWERED_LOOK_MS = 10_000;

/** Whether every member pod not on its way out answered the last look. */
export function everyMemberAnswered(x: Pick<ExecutionContext, 'pods' | 'members' | 'statuses'>): boolean {
  return x.members !== undefined && x.pods.every((p) => p.metadata?.deletionTimestamp || x.statuses.has(p.metadata?.name ?? ''));
}
const POLLED_WAITS: ReadonlySet<WaitingFor> = new Set(['MembersStarting', 'CatchingUp']);
/** etcd's "not now" to a membership change (its 5 s of every voter connected, a learner not yet in sync): asked again this soon. */
const POLLED_REFUSALS: ReadonlySet<Action['type']> = new Set(['AddMember', 'PromoteLearner']);

/**
 * A membership step polled at MEMBERSHIP_POLL_MS is polled so for MEMBERSHIP_POLL_FOR_MS at most, the
 * same step (kind and members) counted across passes; then every PLAIN_WAIT_MS: a pod that never starts is no
 * reason to ask etcd four times a second for as long as it does not.
 */
export function pollingBounded(polled: Durations, key: string, action: Action, requeueAfterMs: number, nowMs: number): number {
  const step = `${action.type} ${'members' in action ? action.members.join(',') : ''}`;
  const polledForMs = polled.observe(key, requeueAfterMs === MEMBERSHIP_POLL_MS ? [step] : [], nowMs).get(step) ?? 0;
  return polledForMs > MEMBERSHIP_POLL_FOR_MS ? PLAIN_WAIT_MS : requeueAfterMs;
}

export interface Outcome {
  /** When to look again (ms); undefined to wait for a change. */
  requeueAfterMs?: number;
  /** etcd's "not now", or the API server's conflict with a pod that changed, when the action was refused: nothing changed. */
  refused?: string;
}

/** Performs one planned action. */
export async function execute(action: Action, x: ExecutionContext): Promise<Outcome> {
  try {
    const requeueAfterMs = await perform(action, x);
    return requeueAfterMs === undefined ? {} : { requeueAfterMs };
  } catch (err) {
    // Logged by the caller, once per refusal rather than once per try.
    if (err instanceof EtcdError && TRANSIENT.test(err.message)) return { requeueAfterMs: POLLED_REFUSALS.has(action.type) ? MEMBERSHIP_POLL_MS : 1000, refused: err.message };
    // A patch made from a pod that changed since it was observed (a conflict): nothing changed; it is made anew.
    if (action.type === 'PatchPodMetadata' && err instanceof ApiError && err.status === 409) return { requeueAfterMs: 1000, refused: err.message };
    throw err;
  }
}

async function perform(action: Action, x: ExecutionContext): Promise<number | undefined> {
  const names = (x.members ?? []).map(memberName);
  switch (action.type) {
    case 'Bootstrap': {
      const initial = Array.from({ length: action.size }, () => newMemberName(x.address.cluster));
      for (const m of initial) await createMember(x, m, action.version, { state: 'new', peers: initial, bootstrapMembers: initial });
      return 1000;
    }
    case 'ResumeBootstrap':
      for (const m of action.missing) {
        const ran = action.ran?.includes(m) ?? false;
        await createMember(x, m, action.version, { state: 'new', peers: action.initialMembers, bootstrapMembers: action.initialMembers, ...(ran ? { ran } : {}) });
      }
      return 1000;
    case 'MarkBootstrapped':
    case 'RecordTakeover':
      return 500;
    // The claims first, then status (bootstrapped, and the membership to restart): a stop in between leaves
    // them marked as adopted, and the next pass adopts again.
    case 'Adopt':
      for (const claim of action.claims) await adoptClaim(x.transport, x.address, x.cluster.metadata.uid ?? '', claimRetention(x.cluster.spec), claim);
      return 500;
    case 'CreatePod': {
      const peers = action.peers ?? (names.includes(action.member) ? names : [...names, action.member]);
      await createMember(x, action.member, action.version, { state: 'existing', peers, ...(action.forceNewCluster ? { forceNewCluster: true } : {}) });
      return 1000;
    }
    case 'AddMember': {
      const member = newMemberName(x.address.cluster);
      await x.etcd.memberAdd(leaderEndpoint(x), peerUrl(x.address, member), action.learner);
      await createMember(x, member, action.version, { state: 'existing', peers: [...names, member] });
      return MEMBERSHIP_POLL_MS;
    }
    case 'PromoteLearner':
      await x.etcd.memberPromote(leaderEndpoint(x), action.memberId);
      return MEMBERSHIP_POLL_MS;
    case 'MoveLeader':
      await x.etcd.moveLeader(leaderEndpoint(x), action.toMemberId);
      return 500;
    case 'RemoveMember':
      // Its claim stays for the grace period: a removal on a wrong judgement must not also destroy the data.
      await x.etcd.memberRemove(leaderEndpoint(x, action.member), action.memberId);
      await markRemoved(x.transport, x.address, action.member, Date.now());
      await deleteMember(x, action.member, false);
      return 1000;
    case 'DeleteClaim':
      await deleteClaim(x, action.member);
      return 1000;
    case 'SetClaimAside':
      await markRemoved(x.transport, x.address, action.member, Date.now());
      return 200;
    case 'DeletePod':
      await deleteMember(x, action.member, action.deleteClaim, action.force);
      return 1000;
    case 'PatchPodMetadata':
      await patchMetadata(x, action.member, action.recordTemplate);
      return 200;
    case 'TakeOver':
      // Only records on the pods; status records the takeover once they are seen (RecordTakeover).
      for (const member of action.members) {
        await x.transport.call('PATCH', `/api/v1/namespaces/${x.address.namespace}/pods/${member}`,
          { metadata: { annotations: { [ANNOTATION_CONFIG]: action.config, [ANNOTATION_POD_TEMPLATE]: action.template } } }, 'application/merge-patch+json');
      }
      return 200;
    case 'Compact':
      // Done already if an earlier attempt landed before its answer was lost.
      await x.etcd.compact(leaderEndpoint(x), action.revision).catch((err: unknown) => {
        if (!compactedAway(err)) throw err;
      });
      return 200;
    case 'EnableDowngrade':
      await x.etcd.enableDowngrade(leaderEndpoint(x), action.to);
      return 1000;
    case 'CancelDowngrade':
      await x.etcd.cancelDowngrade(leaderEndpoint(x));
      return 1000;
    case 'Defragment':
      await x.etcd.defragment(clientUrl(x.address, action.member), DEFRAGMENT_TIMEOUT_MS);
      return 200;
    case 'DisarmAlarms':
      for (const alarm of action.alarms) await x.etcd.alarmDisarm(leaderEndpoint(x), alarm);
      return 500;
    case 'Wait':
      return POLLED_WAITS.has(action.awaiting) ? MEMBERSHIP_POLL_MS : PLAIN_WAIT_MS;
    case 'QuorumLost':
    case 'CorruptionUndecided':
    case 'UpgradeRefused':
    case 'Blocked':
      return 30_000;
    // Recorded in status by the reconciler; nothing to do in the cluster itself.
    case 'StartRebuild':
    case 'ClearedForRebuild':
    case 'CompleteSurvivorRecovery':
      return 200;
    // The survivor's pod goes, its claim stays: it comes back on its data, alone and then normally.
    case 'StartSurvivorRecovery':
    case 'RestartSurvivor':
      await deleteMember(x, action.survivor, false);
      return 1000;
    case 'Steady':
      return everyMemberAnswered(x) ? STEADY_LOOK_MS : UNANSWERED_LOOK_MS;
    case 'Paused':
      return undefined;
  }
}

/** The leader's client URL if known, else any answering member's other than `avoid`. */
function leaderEndpoint(x: ExecutionContext, avoid?: string): string {
  const answering = [...x.statuses].filter(([name]) => name !== avoid);
  const leader = answering.find(([, s]) => s.leaderId === s.memberId) ?? answering[0];
  if (!leader) throw new EtcdError('cluster', 'no member answers');
  return clientUrl(x.address, leader[0]);
}

/** How a member's pod starts: its initial cluster state and peers, and what else is known of it. */
interface MemberStart {
  state: 'new' | 'existing';
  peers: string[];
  /** The initial members, for a member of a bootstrap. */
  bootstrapMembers?: string[];
  forceNewCluster?: true;
  /** A bootstrap member whose claim says it ran: its data is on the claim (etcd ignores the initial cluster then). */
  ran?: true;
}

async function createMember(x: ExecutionContext, member: string, version: string, { state, peers, bootstrapMembers, forceNewCluster, ran }: MemberStart): Promise<void> {
  const ns = `/api/v1/namespaces/${x.address.namespace}`;
  const uid = x.cluster.metadata.uid ?? '';
  const claimSpec = x.cluster.spec.pod?.persistentVolumeClaimSpec;
  // A claim is made only for a member that never started. One that started keeps its data on its claim, and
  // a claim made anew would be empty: the member would rejoin having forgotten what it acknowledged.
  const started = ran === true || (state === 'existing' && (x.members === undefined || x.members.some((m) => memberName(m) === member && m.name !== '')));
  const claimMade = claimSpec && !started
    ? await x.transport.call('POST', `${ns}/persistentvolumeclaims`, memberClaim(x.address, uid, member, claimSpec, claimRetention(x.cluster.spec), bootstrapMembers))
      .then(() => true, (err: unknown) => { ignoreStatus(409)(err); return false; })
    : false;
  const pod = memberPod({
    address: x.address, clusterUid: uid, spec: x.cluster.spec, specGeneration: x.cluster.metadata.generation ?? 0, member, version, state,
    initialCluster: initialCluster(x.address, peers), token: uid, withClaim: claimSpec !== undefined, operator: x.operator, expectData: started,
    ...(bootstrapMembers ? { bootstrapMembers } : {}),
    ...(x.tls ? { tls: x.tls } : {}),
    // A founder that ran holds its data already: etcdutl would refuse to restore over it, for ever.
    ...(x.restore && state === 'new' && !started ? { restore: x.restore } : {}),
    ...(forceNewCluster ? { forceNewCluster } : {}),
  });
  // A pod that exists already (made by an earlier pass whose answer was lost) is not made again, nor said to be.
  const created = await x.transport.call('POST', `${ns}/pods`, pod).then(() => true, async (err: unknown) => {
    if (err instanceof ApiError && err.status === 409) return false;
    // The pod refused (a missing PriorityClass, a quota): the claim just made for it holds nothing and no pod
    // names it. Left, it would be a claim of a bootstrap that cannot be seen, and no bootstrap would follow.
    if (claimMade && refusedAsMade(err)) await deleteClaim(x, member);
    throw err;
  });
  if (created) x.log.info({ member, version, state }, 'member pod created');
}

/**
 * Patches a pod's metadata to the spec's, from the pod as the plan observed it (the API server refuses it if the
 * pod changed since: see execute). A pod gone is the next pass's to see.
 */
async function patchMetadata(x: ExecutionContext, member: string, template: string | undefined): Promise<void> {
  const pod = x.pods.find((p) => p.metadata?.name === member);
  if (!pod) return;
  await x.transport.call('PATCH', `/api/v1/namespaces/${x.address.namespace}/pods/${member}`, metadataPatch(pod, x.cluster.spec, template), 'application/merge-patch+json')
    .catch(ignoreStatus(404));
}

/** Deletes a member's pod (at once, with `force`: no grace period, no wait for its kubelet) and perhaps its claim. */
async function deleteMember(x: ExecutionContext, member: string, withClaim: boolean, force?: true): Promise<void> {
  await x.transport.call('DELETE', `/api/v1/namespaces/${x.address.namespace}/pods/${member}${force ? '?gracePeriodSeconds=0' : ''}`).catch(ignoreStatus(404));
  if (withClaim) await deleteClaim(x, member);
}

async function deleteClaim(x: ExecutionContext, member: string): Promise<void> {
  await x.transport.call('DELETE', claimPath(x.address, member)).catch(ignoreStatus(404));
}

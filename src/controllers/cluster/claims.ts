import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ignoreStatus } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import { rfc3339 } from '../../runtime/time.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import type { ClaimMarks, RetainedClaim } from '../../etcd/planner.js';
import { ANNOTATION_MEMBER_REMOVED } from '../../k8s/labels.js';
import { adoptedFrom, claimBootstrap, claimCluster, claimOwnership, memberStarted, ownedAsPolicySays, removedMember, startedPatch } from '../../k8s/member-claim.js';
import type { ClaimRetention } from '../../k8s/member-claim.js';
import { byName } from '../../runtime/order.js';

const MERGE = 'application/merge-patch+json';
export const claimPath = (a: ClusterAddress, member: string): string => `/api/v1/namespaces/${a.namespace}/persistentvolumeclaims/${member}`;

/** The claims carrying a cluster's labels, sorted: its own, and those a deleted EtcdCluster of its name left behind. */
export interface SortedClaims {
  own: V1PersistentVolumeClaim[];
  retained: RetainedClaim[];
}

/**
 * Sorts the labelled claims of a cluster. A claim being deleted holds no data to come back to. An adopted
 * claim whose adoption status does not record yet (the operator stopped in between) is still retained, so
 * that the adoption is finished rather than taken for a bootstrap of unknown plan. `offerRetained` is false
 * for a restore or a rebuild, which starts from a snapshot and leaves the claims of others alone (and clears
 * its own, adopted ones included).
 */
export function sortClaims(labelled: V1PersistentVolumeClaim[], uid: string, bootstrapped: boolean, offerRetained: boolean): SortedClaims {
  // In name order, whatever order they were read in: a plan made from the watch cache is confirmed by one made
  // from a fresh list, and the two must pick the same claim when the rule picks the first of several.
  const live = labelled.filter((c) => !c.metadata?.deletionTimestamp)
    .sort((a, b) => byName(a.metadata?.name ?? '', b.metadata?.name ?? ''));
  const adopting = (c: V1PersistentVolumeClaim): boolean => offerRetained && !bootstrapped && adoptedFrom(c) !== undefined;
  const own = claimsOf(live, uid).filter((c) => !adopting(c));
  const retained = offerRetained ? live.filter((c) => !own.includes(c)) : [];
  return { own, retained: retained.map(retainedClaim) };
}

/** The claims of this incarnation (adopted ones too, finished or not), whatever else is known. */
export const claimsOf = (labelled: V1PersistentVolumeClaim[], uid: string): V1PersistentVolumeClaim[] =>
  labelled.filter((c) => !c.metadata?.deletionTimestamp && claimCluster(c) === uid);

/** What the planner knows of a claim a deleted cluster of the name left; an adopted one keeps the incarnation it came from. */
const retainedClaim = (c: V1PersistentVolumeClaim): RetainedClaim => ({
  name: c.metadata?.name ?? '',
  removed: removedMember(c),
  incarnation: adoptedFrom(c) ?? claimCluster(c) ?? '',
  neverRan: memberStarted(c) === false,
  createdMs: c.metadata?.creationTimestamp ? new Date(c.metadata.creationTimestamp).getTime() : 0,
});

/** What the cluster's own claims say of themselves (see ClaimMarks). */
export function claimMarks(own: V1PersistentVolumeClaim[]): ClaimMarks {
  const named = (cs: V1PersistentVolumeClaim[]): string[] => cs.map((c) => c.metadata?.name ?? '').sort();
  const setAside = own.filter(removedMember);
  const bootstrapMembers = own.filter((c) => !removedMember(c)).map(claimBootstrap).find((b) => b !== undefined);
  return {
    neverRan: named(own.filter((c) => memberStarted(c) === false)), started: named(own.filter((c) => memberStarted(c) === true)),
    setAside: named(setAside), ...(bootstrapMembers ? { bootstrapMembers } : {}),
  };
}

/**
 * Records on each of the cluster's claims whose member's etcd is seen to have run that it did (claims of
 * earlier versions, which say nothing, too): from then on it may hold data, and is never taken for empty.
 * Answers the claims it marked.
 */
export async function recordStarts(transport: ApiTransport, a: ClusterAddress, own: V1PersistentVolumeClaim[], ran: (member: string) => boolean): Promise<string[]> {
  const marked: string[] = [];
  for (const c of own) {
    const name = c.metadata?.name ?? '';
    if (memberStarted(c) === true || !ran(name)) continue;
    await transport.call('PATCH', claimPath(a, name), startedPatch, MERGE).catch(ignoreStatus(404));
    marked.push(name);
  }
  return marked;
}

/**
 * Brings the cluster's own claims to its retention policy: an owner reference under Delete, none under Retain
 * (claims made before the policy existed carry one), and forgets an adoption once status records it.
 */
export async function ensureClaimOwnership(transport: ApiTransport, a: ClusterAddress, uid: string, retention: ClaimRetention, own: V1PersistentVolumeClaim[], bootstrapped: boolean): Promise<void> {
  for (const c of own) {
    if (ownedAsPolicySays(c, uid, retention) && !(bootstrapped && adoptedFrom(c) !== undefined)) continue;
    await transport.call('PATCH', claimPath(a, c.metadata?.name ?? ''), claimOwnership(a, uid, retention, null), MERGE).catch(ignoreStatus(404));
  }
}

/**
 * Makes a retained claim the cluster's, recording whose it was. The claim's resourceVersion rides along, so a
 * claim changed since it was read (deleted and made again, say) is not adopted on a stale reading.
 */
export async function adoptClaim(transport: ApiTransport, a: ClusterAddress, uid: string, retention: ClaimRetention, member: string): Promise<void> {
  const claim = (await transport.call('GET', claimPath(a, member))) as V1PersistentVolumeClaim;
  const previous = claimCluster(claim) === uid ? adoptedFrom(claim) : claimCluster(claim);
  const { metadata } = claimOwnership(a, uid, retention, previous ?? 'unknown');
  await transport.call('PATCH', claimPath(a, member), { metadata: { ...metadata, resourceVersion: claim.metadata?.resourceVersion } }, MERGE);
}

/** Marks the claim of a member just removed from etcd's member list: an adoption must not restart its data. */
export async function markRemoved(transport: ApiTransport, a: ClusterAddress, member: string, nowMs: number): Promise<void> {
  await transport.call('PATCH', claimPath(a, member), { metadata: { annotations: { [ANNOTATION_MEMBER_REMOVED]: rfc3339(nowMs) } } }, MERGE).catch(ignoreStatus(404));
}

import type { V1OwnerReference, V1PersistentVolumeClaim, V1PersistentVolumeClaimSpec } from '@kubernetes/client-node';
import type { ClusterAddress } from '../etcd/identity.js';
import type { ClusterSpec } from '../api/etcd-cluster.js';
import { ANNOTATION_ADOPTED_FROM, ANNOTATION_CLUSTER_UID, ANNOTATION_INITIAL_CLUSTER, ANNOTATION_MEMBER_REMOVED, ANNOTATION_MEMBER_STARTED, clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/** What becomes of the member claims when their EtcdCluster is deleted; keeping them is the default. */
export type ClaimRetention = 'Retain' | 'Delete';

export const claimRetention = (spec: ClusterSpec): ClaimRetention => spec.persistentVolumeClaimRetentionPolicy?.whenDeleted ?? 'Retain';

/**
 * A member's data volume claim, named as the member and marked with its cluster's UID (the incarnation whose
 * data it will hold), as not yet started on, and, for a bootstrap's member, with the bootstrap's initial
 * members: the claims outlive the bootstrap's pods, so a bootstrap whose pods are all gone resumes from them.
 * Only under the Delete policy does it carry an owner reference: with one, deleting the EtcdCluster (or its
 * CRD) deletes the data.
 */
export function memberClaim(a: ClusterAddress, clusterUid: string, member: string, spec: V1PersistentVolumeClaimSpec, retention: ClaimRetention, bootstrapMembers?: string[]): V1PersistentVolumeClaim {
  return {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim',
    metadata: {
      name: member, namespace: a.namespace, labels: clusterLabels(a.cluster),
      annotations: {
        [ANNOTATION_CLUSTER_UID]: clusterUid, [ANNOTATION_MEMBER_STARTED]: 'false',
        ...(bootstrapMembers ? { [ANNOTATION_INITIAL_CLUSTER]: bootstrapMembers.join(',') } : {}),
      },
      ...(retention === 'Delete' ? { ownerReferences: [ownedByCluster(a.cluster, clusterUid)] } : {}),
    },
    spec,
  };
}

/** A JSON merge patch of a claim's ownership: null removes a field. */
export interface OwnershipPatch {
  metadata: { annotations: Record<string, string | null>; ownerReferences: V1OwnerReference[] | null };
}

/**
 * The merge patch that makes a claim its cluster's under the retention policy (a null owner list removes it),
 * recording where an adopted claim came from, or (null) forgetting it once the adoption is recorded.
 */
export function claimOwnership(a: ClusterAddress, clusterUid: string, retention: ClaimRetention, adoptedFrom: string | null): OwnershipPatch {
  return {
    metadata: {
      annotations: { [ANNOTATION_CLUSTER_UID]: clusterUid, [ANNOTATION_ADOPTED_FROM]: adoptedFrom },
      ownerReferences: retention === 'Delete' ? [ownedByCluster(a.cluster, clusterUid)] : null,
    },
  };
}

/** The EtcdCluster UID whose member's data a claim holds: its annotation or, on a claim made before there was one, its owner. */
export const claimCluster = (c: V1PersistentVolumeClaim): string | undefined =>
  c.metadata?.annotations?.[ANNOTATION_CLUSTER_UID] ?? c.metadata?.ownerReferences?.find((r) => r.kind === 'EtcdCluster')?.uid;

/** Whether the claim carries its cluster's mark, and an owner reference to it exactly when the policy is Delete. */
export function ownedAsPolicySays(c: V1PersistentVolumeClaim, clusterUid: string, retention: ClaimRetention): boolean {
  const owners = (c.metadata?.ownerReferences ?? []).filter((r) => r.kind === 'EtcdCluster');
  return c.metadata?.annotations?.[ANNOTATION_CLUSTER_UID] === clusterUid
    && (retention === 'Delete' ? owners.length === 1 && owners[0]?.uid === clusterUid : owners.length === 0);
}

export const removedMember = (c: V1PersistentVolumeClaim): boolean => c.metadata?.annotations?.[ANNOTATION_MEMBER_REMOVED] !== undefined;

/**
 * How long ago the claim's member was removed, by the time recorded on it (0 when none is): the claim's grace
 * period counts from then, not from when this process first saw it, so an operator restart does not begin it again.
 */
export function removedForMs(c: V1PersistentVolumeClaim, nowMs: number): number {
  const at = Date.parse(c.metadata?.annotations?.[ANNOTATION_MEMBER_REMOVED] ?? '');
  return Number.isFinite(at) ? Math.max(0, nowMs - at) : 0;
}
export const adoptedFrom = (c: V1PersistentVolumeClaim): string | undefined => c.metadata?.annotations?.[ANNOTATION_ADOPTED_FROM];

/**
 * Whether the claim's member was ever seen running on it: false only on a claim that says so. A claim made
 * before the mark existed says nothing (undefined) and may hold data.
 */
export function memberStarted(c: V1PersistentVolumeClaim): boolean | undefined {
  const mark = c.metadata?.annotations?.[ANNOTATION_MEMBER_STARTED];
  return mark === undefined ? undefined : mark !== 'false';
}

/** The initial members of the bootstrap that made the claim, if one did. */
export const claimBootstrap = (c: V1PersistentVolumeClaim): string[] | undefined =>
  c.metadata?.annotations?.[ANNOTATION_INITIAL_CLUSTER]?.split(',');

/** The merge patch that records on a claim that its member has been seen running. */
export const startedPatch = { metadata: { annotations: { [ANNOTATION_MEMBER_STARTED]: 'true' } } };

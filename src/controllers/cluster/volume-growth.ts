import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { ApiError } from '../../runtime/transport.js';
import type { ApiTransport } from '../../runtime/transport.js';
import type { ClusterSpec, Condition } from '../../api/etcd-cluster.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { ANNOTATION_MEMBER_REMOVED } from '../../k8s/labels.js';
import { quantityValue } from '../../k8s/quantity.js';
import { claimPath } from './claims.js';

type GrowthCondition = Omit<Condition, 'lastTransitionTime'>;

/** A claim's storage as a number of bytes (0 when absent or not a quantity). */
const bytes = (q: string | number | undefined): number => (q === undefined ? 0 : quantityValue(String(q)) ?? 0);

const names = (claims: V1PersistentVolumeClaim[]): string => claims.map((c) => c.metadata?.name ?? '').join(', ');

/**
 * How long a grown volume's file system may wait for kubelet before a restart is advised. The resizer marks every
 * growth that needs the node FileSystemResizePending, online or not; kubelet grows a mounted one at its next sync of
 * the pod (about a minute and a half by default). Past this, the plugin grows file systems only when mounted again.
 */
export const ONLINE_RESIZE_GRACE_MS = 5 * 60_000;

/** Since when (ms since the epoch) the claim's file system waits to grow; undefined when it does not. */
const resizePendingSince = (c: V1PersistentVolumeClaim): number | undefined => {
  const pending = (c.status?.conditions ?? []).find((x) => x.type === 'FileSystemResizePending' && x.status === 'True');
  if (!pending) return undefined;
  const since = pending.lastTransitionTime ? new Date(pending.lastTransitionTime).getTime() : NaN;
  return Number.isNaN(since) ? 0 : since;
};

/**
 * Why the claim's growth failed, in the resizer's or kubelet's words (the ControllerResizeError and NodeResizeError
 * conditions, or a growth marked infeasible); undefined while none failed. Kubernetes retries it, in vain until the
 * cause is fixed or the request goes back.
 */
export const resizeFailure = (c: V1PersistentVolumeClaim): string | undefined => {
  const error = (c.status?.conditions ?? []).find((x) => (x.type === 'ControllerResizeError' || x.type === 'NodeResizeError') && x.status === 'True');
  if (error) return error.message ?? error.type;
  const state = c.status?.allocatedResourceStatuses?.['storage'];
  return state?.endsWith('Infeasible') ? state : undefined;
};

const requestOf = (c: V1PersistentVolumeClaim): string | number | undefined => c.spec?.resources?.requests?.['storage'];
const capacityOf = (c: V1PersistentVolumeClaim): string | undefined => c.status?.capacity?.['storage'];

/** A claim the API server refused to grow, and its words. */
export interface RefusedGrowth { claim: V1PersistentVolumeClaim; why: string }

/** The storage the spec asks of every member's claim, the claims of members (not of removed ones), and those below it. */
export function claimGrowth(spec: ClusterSpec, own: V1PersistentVolumeClaim[]): { wanted: string; active: V1PersistentVolumeClaim[]; below: V1PersistentVolumeClaim[]; cancelled: V1PersistentVolumeClaim[] } | undefined {
  // The client types it a string; the CRD admits an integer too (int-or-string), which a manifest may hold.
  const wanted = spec.pod?.persistentVolumeClaimSpec?.resources?.requests?.['storage'] as string | number | undefined;
  if (wanted === undefined) return undefined;
  const active = own.filter((c) => c.metadata?.annotations?.[ANNOTATION_MEMBER_REMOVED] === undefined);
  return {
    wanted: String(wanted), active, below: active.filter((c) => bytes(requestOf(c)) < bytes(wanted)),
    // A request taken back while its claim had not grown that far: the claim goes back with it, which Kubernetes
    // allows down to just above what the volume holds (a growth that failed, or not finished yet, is cancelled).
    cancelled: active.filter((c) => bytes(requestOf(c)) > bytes(wanted) && bytes(wanted) > bytes(capacityOf(c))),
  };
}

/** The VolumeGrowth condition: shown once a claim was below the spec's request, and kept (True) once they all hold it. */
export function growthCondition(wanted: string, active: V1PersistentVolumeClaim[], refused: RefusedGrowth[], namespace: string, shownBefore: boolean, nowMs = Date.now()): GrowthCondition | undefined {
  if (refused.length > 0) {
    return {
      type: 'VolumeGrowth', status: 'False', reason: 'ExpansionRefused',
      message: `claims ${names(refused.map((r) => r.claim))} cannot grow to ${wanted}: ${refused[0]?.why ?? ''}. Their StorageClass must allow expansion `
        + '(allowVolumeExpansion: true) and its volume plugin support it; until then they keep their size (members made from now get the new one). '
        + 'To move members onto larger volumes instead, restore a backup into a new cluster with the larger request; or take the request back '
        + '(down to status.claimedStorage, what the claims hold)',
    };
  }
  const failed = active.filter((c) => resizeFailure(c) !== undefined);
  if (failed.length > 0) {
    const held = largestQuantity(failed.map(capacityOf)) ?? 'their present size';
    return {
      type: 'VolumeGrowth', status: 'False', reason: 'ExpansionFailed',
      message: `claims ${names(failed)} could not grow to ${wanted}: ${resizeFailure(failed[0] ?? {}) ?? ''}. Nothing was restarted, and a restart `
        + `would not finish it (the pod could not mount the volume). Fix the cause, or cancel the growth: set the storage request back to more than ${held}, `
        + 'what they hold (Kubernetes lets a claim\'s request go back only above its capacity)',
    };
  }
  const pending = active.filter((c) => { const since = resizePendingSince(c); return since !== undefined && nowMs - since > ONLINE_RESIZE_GRACE_MS; });
  if (pending.length > 0) {
    const first = pending[0]?.metadata?.name ?? '';
    return {
      type: 'VolumeGrowth', status: 'False', reason: 'FileSystemResizePending',
      message: `claims ${names(pending)} are grown to ${wanted} but their file systems grow only when mounted again (the volume plugin cannot grow them online): `
        + (active.length === 1
          ? `restart the member when the cluster may be unavailable for that long, as a one-member cluster serves nothing meanwhile (kubectl delete pod -n ${namespace} ${first}); it comes back on its data`
          : `restart one member at a time, waiting for the cluster to be Available in between (kubectl delete pod -n ${namespace} ${first}); each comes back on its data`),
    };
  }
  // A claim not bound yet (a new member's, bound when its pod is scheduled) has no capacity to judge; one whose
  // file system waits for kubelet (within the grace) is growing still.
  const growing = active.filter((c) => (c.status?.phase === 'Bound' && bytes(capacityOf(c)) < bytes(wanted)) || resizePendingSince(c) !== undefined);
  if (growing.length > 0) {
    return { type: 'VolumeGrowth', status: 'False', reason: 'Expanding', message: `claims ${names(growing)} are growing to ${wanted}, online (a file system when kubelet next syncs its pod), nothing restarted` };
  }
  const largest = largestQuantity(active.map(capacityOf));
  const more = largest !== undefined && bytes(largest) > bytes(wanted) ? ` or more (the largest ${largest}: Kubernetes does not shrink a volume)` : '';
  return shownBefore ? { type: 'VolumeGrowth', status: 'True', reason: 'AtRequestedSize', message: `every member's claim holds ${wanted}${more}` } : undefined;
}

/** What growing the claims found: the condition to show, and the largest capacity a member's claim holds. */
export interface ClaimsGrown {
  condition: GrowthCondition | undefined;
  /** The largest capacity a member's claim holds: the spec's request cannot go below it (admission reads it from status). */
  claimed: string | undefined;
}

/** The largest of these storage quantities, as written; undefined when there is none. */
export function largestQuantity(quantities: readonly (string | number | undefined)[]): string | undefined {
  let largest: string | undefined;
  for (const q of quantities) {
    if (q !== undefined && (largest === undefined || bytes(q) > bytes(largest))) largest = String(q);
  }
  return largest;
}

/**
 * Raising the storage request of spec.pod.persistentVolumeClaimSpec grows every member's claim to it (admission
 * refuses a smaller one): each claim below it is patched, and Kubernetes expands the volume where its StorageClass
 * allows expansion (allowVolumeExpansion), online where the volume plugin can. Nothing restarts here: a plugin that
 * grows the file system only when the volume is next mounted leaves the claim FileSystemResizePending, which the
 * condition names with the restart that finishes it. Claims of removed members are left as they are.
 */
export async function growClaims(transport: ApiTransport, a: ClusterAddress, spec: ClusterSpec, own: V1PersistentVolumeClaim[], shownBefore: boolean): Promise<ClaimsGrown> {
  const growth = claimGrowth(spec, own);
  if (!growth) return { condition: undefined, claimed: undefined };
  const refused: RefusedGrowth[] = [];
  for (const claim of [...growth.below, ...growth.cancelled]) {
    const patch = { spec: { resources: { requests: { storage: growth.wanted } } } };
    await transport.call('PATCH', claimPath(a, claim.metadata?.name ?? ''), patch, 'application/merge-patch+json').catch((err: unknown) => {
      // Refused by the API server's admission: the StorageClass does not allow expansion, or the volume was not provisioned dynamically.
      if (err instanceof ApiError && [403, 422].includes(err.status)) refused.push({ claim, why: err.message });
      else if (!(err instanceof ApiError && err.status === 404)) throw err;
    });
  }
  // The floor of the spec's request is what the volumes hold, as Kubernetes' own for a claim's: a raise refused or
  // failed can be taken back, a growth done cannot.
  const claimed = largestQuantity(growth.active.map(capacityOf));
  return { condition: growthCondition(growth.wanted, growth.active, refused, a.namespace, shownBefore), claimed };
}

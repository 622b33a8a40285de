import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { DATA_GUARD, DATA_LOST_EXIT, ETCD_CONTAINER } from '../../k8s/member-pod.js';

/** Why a member pod does not run etcd, as the scheduler or its kubelet says. */
export const TROUBLE_REASONS = ['Unschedulable', 'ImagePullFailed', 'ContainerFailed', 'CrashLooping', 'PodFailed'] as const;

export type TroubleReason = typeof TROUBLE_REASONS[number];

export interface PodTrouble {
  reason: TroubleReason;
  /** Names the pod, the cause and what to check. */
  message: string;
}

const IMAGE_PULL = ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull'];
const CANNOT_START = ['CreateContainerConfigError', 'CreateContainerError', 'RunContainerError', 'PreCreateHookError', 'PreStartHookError'];

/** What keeps a member pod from running etcd, or undefined while it runs or starts as it should. */
export function podTrouble(pod: V1Pod): PodTrouble | undefined {
  const name = pod.metadata?.name ?? '';
  // Failed for good (its kubelet evicted it under node pressure, or refused it): nothing in it runs again.
  if (pod.status?.phase === 'Failed') {
    const why = [pod.status.reason, pod.status.message].filter((w) => w).join(': ');
    return { reason: 'PodFailed', message: `member pod ${name} failed${why ? ` (${why})` : ''} on node ${pod.spec?.nodeName ?? '(none)'}` };
  }
  if (unschedulable(pod)) {
    const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
    return {
      reason: 'Unschedulable',
      message: `member pod ${name} cannot be scheduled: ${scheduled?.message ?? 'no node fits'}. Check spec.pod nodeSelector, affinity, antiAffinity, tolerations `
        + 'and resources.requests against the nodes, and that the StorageClass of persistentVolumeClaimSpec can provision a volume',
    };
  }
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  for (const c of statuses) {
    const trouble = containerTrouble(name, pod.metadata?.namespace ?? '', c);
    if (trouble) return trouble;
  }
  return undefined;
}

/** The scheduler has found no node for the pod: it runs only once one fits (nodes added or freed, the spec relaxed). */
export function unschedulable(pod: V1Pod): boolean {
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable';
}

function containerTrouble(pod: string, namespace: string, c: V1ContainerStatus): PodTrouble | undefined {
  const waiting = c.state?.waiting;
  const why = waiting?.message ? `: ${waiting.message}` : '';
  if (waiting?.reason && IMAGE_PULL.includes(waiting.reason)) {
    return {
      reason: 'ImagePullFailed',
      message: `member pod ${pod} cannot pull image ${c.image} (${waiting.reason}${why}). The etcd image is spec.repository:v<spec.version>: `
        + 'check both, and that the nodes can reach that registry',
    };
  }
  if (waiting?.reason && CANNOT_START.includes(waiting.reason)) {
    return { reason: 'ContainerFailed', message: `container ${c.name} of member pod ${pod} cannot start (${waiting.reason}${why})` };
  }
  const last = c.lastState?.terminated;
  // The data guard's refusal is a lost volume, which the planner acts on; not a fault to report as a crash.
  const guardRefused = c.name === DATA_GUARD && last?.exitCode === DATA_LOST_EXIT;
  if (waiting?.reason === 'CrashLoopBackOff' && !guardRefused) {
    const exit = last ? `; last exit code ${last.exitCode}${last.reason ? ` (${last.reason})` : ''}` : '';
    return {
      reason: 'CrashLooping',
      message: `container ${c.name} of member pod ${pod} keeps failing (restarted ${c.restartCount} times${exit}): `
        + `see kubectl logs -n ${namespace} ${pod} -c ${c.name} --previous`,
    };
  }
  return undefined;
}

/**
 * Whether the pod's etcd container is known to have started: running now, restarted, or a termination that
 * records when it started. What a claim's start mark is set on: a pod being deleted shows its never-started
 * container as terminated (ContainerStatusUnknown, no start time), which is no run.
 */
export function etcdStarted(pod: V1Pod): boolean {
  const etcd = pod.status?.containerStatuses?.find((c) => c.name === ETCD_CONTAINER);
  if (!etcd) return false;
  // The API server sends absent times as null, which a cached pod keeps as it came.
  return etcd.restartCount > 0 || Boolean(etcd.state?.running) || [etcd.state?.terminated, etcd.lastState?.terminated].some((t) => Boolean(t?.startedAt));
}

/** The pod's etcd container has never run: it holds no data and has acknowledged nothing. */
export function etcdNeverRan(pod: V1Pod): boolean {
  const etcd = pod.status?.containerStatuses?.find((c) => c.name === ETCD_CONTAINER);
  return !etcd || (etcd.restartCount === 0 && etcd.state?.running === undefined && etcd.state?.terminated === undefined && etcd.lastState?.terminated === undefined);
}

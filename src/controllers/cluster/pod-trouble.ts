import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { DATA_GUARD, DATA_LOST_EXIT, DATA_NOT_OURS_EXIT, DATA_VOLUME, ETCD_CONTAINER } from '../../k8s/member-pod.js';
import { fetchRefusal } from '../restore/backup-refusal.js';

/** Why a member pod does not run etcd, as the scheduler or its kubelet says. */
export const TROUBLE_REASONS = ['Unschedulable', 'ImagePullFailed', 'ContainerFailed', 'CrashLooping', 'DiskFull', 'PodFailed', 'BackupRefused'] as const;

export type TroubleReason = typeof TROUBLE_REASONS[number];

export interface PodTrouble {
  reason: TroubleReason;
  /** Names the pod, the cause and what to check. */
  message: string;
}

const IMAGE_PULL = ['ErrImagePull', 'ImagePullBackOff', 'InvalidImageName', 'ErrImageNeverPull'];
/**
 * The operating system's words for ENOSPC, as etcd logs them when its WAL or database cannot grow (for example
 * "failed to save Raft hard state and entries", error "write …/member/wal/….wal: no space left on device") and
 * exits; the kubelet puts the log's tail in the termination message (FallbackToLogsOnError).
 */
const DISK_FULL = /no space left on device/i;
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
    const trouble = containerTrouble(pod, c);
    if (trouble) return trouble;
  }
  return undefined;
}

/** The scheduler has found no node for the pod: it runs only once one fits (nodes added or freed, the spec relaxed). */
export function unschedulable(pod: V1Pod): boolean {
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable';
}

function containerTrouble(p: V1Pod, c: V1ContainerStatus): PodTrouble | undefined {
  const [pod, namespace] = [p.metadata?.name ?? '', p.metadata?.namespace ?? ''];
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
  if (c.name === DATA_GUARD && refusesData(c)) {
    return { reason: 'ContainerFailed', message: `member pod ${pod} cannot use its data: ${guardWords(last?.message ?? c.state?.terminated?.message)}` };
  }
  // A restore's backup refused by the fetch step: no crash loop (no restart can help), and the cluster says so too,
  // not only its EtcdRestore: it never starts, and waits for a person to delete it.
  const refused = fetchRefusal(c);
  if (refused) {
    const { reason, message } = refused;
    return {
      reason: 'BackupRefused',
      message: `member pod ${pod} refused the backup it restores from (${reason}: ${message}); this cluster never starts from it: delete it, and restore from another backup`,
    };
  }
  if (waiting?.reason === 'CrashLoopBackOff' && !guardRefused && DISK_FULL.test(last?.message ?? '')) return diskFull(p, c);
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

/** A data guard that refuses, now, a data directory its user cannot use (see data-guard); one that passed since does not. */
const refusesData = (guard: V1ContainerStatus): boolean => guard.state?.running === undefined && guard.state?.terminated?.exitCode !== 0
  && [guard.state?.terminated, guard.lastState?.terminated].some((t) => t?.exitCode === DATA_NOT_OURS_EXIT);

/** Its data guard refuses, now, a data directory its user cannot use: restarting it on that volume cannot help. */
export function dataNotOurs(pod: V1Pod): boolean {
  const guard = pod.status?.initContainerStatuses?.find((c) => c.name === DATA_GUARD);
  return guard !== undefined && refusesData(guard);
}

/** The data guard's reason, from its log line (the termination message of FallbackToLogsOnError). */
function guardWords(message: string | undefined): string {
  const line = (message ?? '').trim().split('\n').pop() ?? '';
  try {
    const { msg } = JSON.parse(line) as { msg?: unknown };
    if (typeof msg === 'string') return msg;
  } catch {
    // Not the guard's JSON line (an older image): its words as they are.
  }
  return line || 'see its data-guard container\'s log';
}

/**
 * A container that exits for want of space on the member's data volume: restarting it cannot help, and what
 * helps depends on where the data lives. A claim can grow where its StorageClass allows expansion; an emptyDir
 * takes the node's disk. A quota below the volume's size makes etcd refuse writes (its NOSPACE alarm, which
 * the operator recovers from) before the disk fills; etcd's default quota (2 GiB) fills a smaller claim first.
 */
function diskFull(p: V1Pod, c: V1ContainerStatus): PodTrouble {
  const [pod, namespace] = [p.metadata?.name ?? '', p.metadata?.namespace ?? ''];
  const claim = p.spec?.volumes?.find((v) => v.name === DATA_VOLUME)?.persistentVolumeClaim?.claimName;
  const where = claim
    ? `its volume (claim ${claim}) is full: grow it, where its StorageClass allows expansion `
      + `(kubectl patch pvc -n ${namespace} ${claim} --type merge -p '{"spec":{"resources":{"requests":{"storage":"<larger>"}}}}'), `
      + 'and spec.pod.persistentVolumeClaimSpec for the members made later'
    : `its data is on an emptyDir, on node ${p.spec?.nodeName ?? '(none)'}'s disk, which is full: free space there, or give the members volumes (spec.pod.persistentVolumeClaimSpec)`;
  return {
    reason: 'DiskFull',
    message: `container ${c.name} of member pod ${pod} keeps failing with "no space left on device" (restarted ${c.restartCount} times): ${where}. `
      + 'Set spec.quotaBackendBytes well below the volume\'s size (etcd needs room beside its database for its log and snapshots), '
      + 'so that etcd refuses writes before the disk fills',
  };
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

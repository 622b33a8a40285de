import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import { ChecksumMismatch } from '../../storage/storage.js';
import { FETCH_STEP, RESTORE_STEP, SNAPSHOT_REFUSED_EXIT } from '../../k8s/member-pod.js';
import { SealError } from '../../storage/sealed.js';
import { SnapshotRejected } from '../../etcd/snapshot-hash.js';

/** A backup refused for good, as an EtcdRestore reports it: its reason and what was wrong. */
export interface BackupRefusal {
  reason: string;
  message: string;
}

/**
 * Why a backup's bytes are refused (its sha256, its seal, etcd's own hash at its end): no retry of the same
 * object can succeed. Undefined for any other error (a store that did not answer, say), which a retry may mend.
 */
export function backupRefusal(err: unknown): BackupRefusal | undefined {
  if (err instanceof ChecksumMismatch) return { reason: 'ChecksumMismatch', message: err.message };
  if (err instanceof SealError) return { reason: `Backup${err.reason}`, message: err.message };
  if (err instanceof SnapshotRejected) return { reason: 'SnapshotRejected', message: err.message };
  return undefined;
}

/**
 * A refusal as the fetch step's termination message holds it: JSON, its message cut to fit the kubelet's 4096
 * bytes (a message cut by the kubelet would no longer parse, and its reason would be lost).
 */
export function refusalText(r: BackupRefusal): string {
  for (let chars = r.message.length; ; chars = Math.floor(chars / 2)) {
    const text = JSON.stringify({ reason: r.reason, message: chars < r.message.length ? `${r.message.slice(0, chars)}…` : r.message });
    if (Buffer.byteLength(text) <= TERMINATION_MESSAGE_BYTES || chars === 0) return text;
  }
}

/** The kubelet keeps this much of a termination message. */
const TERMINATION_MESSAGE_BYTES = 4096;

/** The fetch step's termination message when the member's restore was complete already and nothing was fetched. */
export const RESTORED_BEFORE = 'restored before: nothing fetched';

/**
 * Why a member refused the snapshot for good, from its restore steps: the fetch step found the backup's bytes
 * refused (its exit code says so, now or in the run before: a step run again may fail otherwise, and the
 * refusal stands), or etcdutl failed, which it does the same way on the same file (a retry then finds the data
 * directory it left and says only that). etcdutl run again over a member's restored data (its fetch step says
 * so) reads no snapshot: its failure (a node without room for the copy) is the member's, not the backup's.
 */
export function snapshotRefused(pods: readonly V1Pod[]): BackupRefusal | undefined {
  for (const pod of pods) {
    const member = pod.metadata?.name ?? '';
    const fetch = pod.status?.initContainerStatuses?.find((s) => s.name === FETCH_STEP);
    const restoredBefore = fetch?.state?.terminated?.message === RESTORED_BEFORE;
    for (const s of pod.status?.initContainerStatuses ?? []) {
      const refused = fetchRefusal(s);
      if (refused) return { reason: refused.reason, message: `member ${member} refused the backup: ${refused.message}` };
      const runs = [s.state?.terminated, s.lastState?.terminated];
      const failed = runs.find((x) => x && x.exitCode !== 0);
      // A sandbox made anew (a node reboot) runs the step again on the data it made: not the snapshot's fault.
      if (s.name === RESTORE_STEP && failed && !restoredBefore && !/not empty/.test(failed.message ?? '')) {
        return { reason: 'SnapshotRejected', message: `etcdutl snapshot restore failed on member ${member}: ${(failed.message ?? '').trim() || `exit code ${failed.exitCode}`}` };
      }
    }
  }
  return undefined;
}

/**
 * The refusal a restore's fetch step ended with, now or in its run before (a step run again may fail otherwise, and
 * the refusal stands); undefined for any other step, or a fetch step that refused nothing.
 */
export function fetchRefusal(step: V1ContainerStatus): BackupRefusal | undefined {
  if (step.name !== FETCH_STEP) return undefined;
  const refused = [step.state?.terminated, step.lastState?.terminated].find((t) => t?.exitCode === SNAPSHOT_REFUSED_EXIT);
  return refused ? readRefusal(refused.message ?? '') : undefined;
}

/**
 * A refusal read back from the fetch step's termination message, which holds it as JSON. A message that is not
 * (a pod made by an earlier operator wrote the bare text) is etcd's snapshot refused, as that operator said.
 */
export function readRefusal(text: string): BackupRefusal {
  try {
    const parsed = JSON.parse(text) as Partial<BackupRefusal>;
    if (typeof parsed.reason === 'string' && typeof parsed.message === 'string') return { reason: parsed.reason, message: parsed.message };
  } catch {
    // Not JSON: the bare text below.
  }
  return { reason: 'SnapshotRejected', message: text.trim() };
}

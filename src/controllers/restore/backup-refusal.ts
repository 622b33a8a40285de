import { ChecksumMismatch } from '../../storage/storage.js';
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

/**
 * A recorded history of concurrent clients of etcd, in the form the linearizability checker (lab/checker, built
 * on porcupine) reads: every operation with its invocation and completion times and its outcome. Times are
 * nanoseconds on one monotonic clock, from the recording's start.
 */

/** What a client asked for. A compare-and-set puts `value` if the key holds `expect` (null: if the key is absent). */
export type Input =
  | { f: 'get'; key: string; serializable?: true }
  | { f: 'put'; key: string; value: string }
  | { f: 'delete'; key: string }
  | { f: 'cas'; key: string; expect: string | null; value: string };

/**
 * How it ended. `ok`: etcd answered (a get's value, null for absent; whether a compare-and-set succeeded; the
 * revision etcd answered at). `fail`: it certainly did not take effect (refused before etcd had it).
 * `unknown`: no answer (a timeout, a cut connection, an error after it was sent): it may or may not have.
 */
export type Outcome =
  | { type: 'ok'; value?: string | null; succeeded?: boolean; deleted?: number; revision: number }
  | { type: 'fail'; error: string }
  | { type: 'unknown'; error: string };

export interface Operation {
  client: number;
  input: Input;
  /** Invoked at, ns. */
  call: number;
  /** Completed at, ns; null when the outcome is unknown (it may take effect at any time after its call). */
  return: number | null;
  outcome: Outcome;
}

/** An event a watcher received, with the revision etcd gave it. */
export interface WatchEvent { revision: number; key: string; type: 'put' | 'delete'; value?: string }

/**
 * The event an answered write made at its revision: a put, a compare-and-set that succeeded, or a delete that
 * deleted the key (one that found nothing made no revision).
 */
export function writtenEvent(op: Operation): WatchEvent | undefined {
  if (op.outcome.type !== 'ok') return undefined;
  if (op.input.f === 'put' || (op.input.f === 'cas' && op.outcome.succeeded === true)) {
    return { revision: op.outcome.revision, key: op.input.key, type: 'put', value: op.input.value };
  }
  if (op.input.f === 'delete' && op.outcome.deleted === 1) return { revision: op.outcome.revision, key: op.input.key, type: 'delete' };
  return undefined;
}

/** The revision of the last write etcd answered as made (0: none). */
export const lastWrittenRevision = (operations: readonly Operation[]): number => operations.reduce((most, o) => Math.max(most, writtenEvent(o)?.revision ?? 0), 0);

export interface History {
  operations: Operation[];
}

/** The checker's answer on a history (lab/checker). */
export interface Verdict {
  /** "ok", "illegal" (an anomaly), or "unknown" (the checker ran out of time). */
  result: 'ok' | 'illegal' | 'unknown';
  /** Operations in the history, and those the check took (serializable reads, failed and unanswered reads left out). */
  operations: number;
  checked: number;
  /** For an anomaly: per key that cannot be linearized, its operations that show it (the smallest part found). */
  anomalies?: { key: string; operations: Operation[] }[];
  /** The porcupine visualisation written, when asked for. */
  visualization?: string;
}

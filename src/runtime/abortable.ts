/** Resolves after `ms`, or at once when the signal aborts (never rejects). */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) {
      resolve();
      return;
    }
    const timer = setTimeout(done, ms);
    signal.addEventListener('abort', done, { once: true });
    function done(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
  });
}

/**
 * `signal.aborted`, read through a call: TypeScript narrows the property after one check and does not see
 * that it changes across an await.
 */
export const isAborted = (signal: AbortSignal): boolean => signal.aborted;

/** A signal that aborts once `ms` have passed, until cleared. */
export interface Deadline { signal: AbortSignal; clear(): void }

/**
 * A signal that aborts with `reason()` after `ms`, held by its own timer until cleared. Not AbortSignal.timeout():
 * its timer holds the signal weakly, so one that only AbortSignal.any() refers to can be collected and its abort
 * lost (Node 20, nodejs/node#57736): a leader's renewal on a black-holed connection then waited past its renew
 * deadline, for as long as the connection stayed silent, while a successor took the lease.
 */
export function deadline(ms: number, reason: () => Error): Deadline {
  const controller = new AbortController();
  const timer = setTimeout(() => { controller.abort(reason()); }, ms);
  return { signal: controller.signal, clear: () => { clearTimeout(timer); } };
}

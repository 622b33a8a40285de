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

import { writtenEvent } from './history.js';
import type { Operation } from './history.js';

/**
 * Anomalies in the revisions etcd answered, across keys (the per-key check cannot see them): an operation begun
 * after another had returned must answer at a revision at least that one's, and a write that made a revision
 * one above it. A member that serves a linearizable read from behind, on a key that has not changed since, is
 * found this way. Serializable reads may be stale and are left out, as are operations without an answer.
 */
export function revisionAnomalies(operations: readonly Operation[]): string[] {
  const answered = operations.filter((o) => o.outcome.type === 'ok' && o.return !== null && !(o.input.f === 'get' && o.input.serializable));
  const byReturn = [...answered].sort((a, b) => (a.return ?? 0) - (b.return ?? 0));
  const byCall = [...answered].sort((a, b) => a.call - b.call);
  const found: string[] = [];
  let done = 0;
  let highest: Operation | undefined;
  const revision = (o: Operation): number => (o.outcome.type === 'ok' ? o.outcome.revision : 0);
  for (const b of byCall) {
    for (; done < byReturn.length && (byReturn[done]?.return ?? Infinity) < b.call; done++) {
      const a = byReturn[done];
      if (a && (!highest || revision(a) > revision(highest))) highest = a;
    }
    if (!highest) continue;
    const floor = revision(highest);
    const short = writtenEvent(b) !== undefined ? revision(b) <= floor : revision(b) < floor;
    if (short) {
      found.push(`client ${b.client}'s ${b.input.f} of ${b.input.key} answered at revision ${revision(b)}, begun after client ${highest.client}'s ${highest.input.f} of ${highest.input.key} had returned at revision ${floor}`);
    }
  }
  return found;
}

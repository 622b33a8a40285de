/**
 * How long each of a set of conditions has held without a break, on this process's monotonic clock: never on
 * a timestamp from the API (another machine's clock, or a cached object's), so that a lagging cache or a
 * skewed clock can never make a condition look older than it is. A restart forgets everything: every
 * condition starts again from zero, which only ever delays an action.
 */
export class Durations {
  private readonly since = new Map<string, Map<string, number>>();

  /**
   * Records that exactly `holding` hold now in `scope` (one cluster): a key that no longer holds is forgotten,
   * so a condition that breaks and comes back counts from its return. Answers how long each has held.
   */
  observe(scope: string, holding: readonly string[], nowMs: number): Map<string, number> {
    const before = this.since.get(scope) ?? new Map<string, number>();
    const now = new Map(holding.map((key) => [key, before.get(key) ?? nowMs]));
    if (now.size > 0) this.since.set(scope, now); else this.since.delete(scope);
    return new Map([...now].map(([key, from]) => [key, nowMs - from]));
  }

  /** Forgets a scope (a cluster that is gone). */
  forget(scope: string): void {
    this.since.delete(scope);
  }
}

/**
 * How long each of a set of distances (a member's lag behind its leader, say) has gone without coming closer
 * than it ever was, on this process's monotonic clock, as Durations times a condition: a distance that reaches
 * a new low counts afresh, one that stays or grows keeps counting, so something slow but coming closer is told
 * from something stuck. A key not given in a pass is forgotten: it counts from zero when it is given again. A
 * restart forgets everything: each starts again from zero, which only ever delays what is judged on it.
 */
export class Progress {
  private readonly closest = new Map<string, Map<string, { distance: number; sinceMs: number }>>();

  /** Records the distances of now in `scope` (one cluster); answers how long each has come no closer. */
  observe(scope: string, distances: ReadonlyMap<string, number>, nowMs: number): Map<string, number> {
    const before = this.closest.get(scope) ?? new Map<string, { distance: number; sinceMs: number }>();
    const now = new Map([...distances].map(([key, distance]) => {
      const was = before.get(key);
      return [key, was && was.distance <= distance ? was : { distance, sinceMs: nowMs }] as const;
    }));
    if (now.size > 0) this.closest.set(scope, now); else this.closest.delete(scope);
    return new Map([...now].map(([key, { sinceMs }]) => [key, nowMs - sinceMs]));
  }

  /** Forgets a scope (a cluster that is gone). */
  forget(scope: string): void {
    this.closest.delete(scope);
  }
}

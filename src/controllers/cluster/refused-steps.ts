import { isDeepStrictEqual } from 'node:util';
import type { Action } from '../../etcd/planner.js';

/** What the log is to say of a step's outcome: etcd's new "not now", or its yes after refusals. */
export type RefusalNews =
  | { kind: 'refused'; refusal: string }
  | { kind: 'accepted'; attempts: number; waitedMs: number };

/**
 * The step etcd last refused for now, per cluster, and how often it was tried: a step retried every 250 ms until
 * etcd takes it (an AddMember in the 5 s after a member connected, say) is logged when first tried, when etcd's
 * words change, and when it is taken, not at every try.
 */
export class RefusedSteps {
  private readonly held = new Map<string, { action: Action; refusal: string; attempts: number; sinceMs: number }>();

  /** Whether `action` is the step last refused for the cluster: a retry of it. */
  retrying(key: string, action: Action): boolean {
    const last = this.held.get(key);
    return last !== undefined && isDeepStrictEqual(last.action, action);
  }

  /** Records a try of `action` and how it ended (`refusal`, or undefined if etcd took it); answers what is news. */
  record(key: string, action: Action, refusal: string | undefined, nowMs: number): RefusalNews | undefined {
    const last = this.retrying(key, action) ? this.held.get(key) : undefined;
    if (refusal === undefined) {
      this.held.delete(key);
      return last ? { kind: 'accepted', attempts: last.attempts + 1, waitedMs: nowMs - last.sinceMs } : undefined;
    }
    this.held.set(key, { action, refusal, attempts: (last?.attempts ?? 0) + 1, sinceMs: last?.sinceMs ?? nowMs });
    return last?.refusal === refusal ? undefined : { kind: 'refused', refusal };
  }

  forget(key: string): void {
    this.held.delete(key);
  }
}

import { isDeepStrictEqual } from 'node:util';
import type { EtcdClient, EtcdStatus } from '../../etcd/client.js';
import { STEADY_LOOK_MS } from './execute.js';
import type { Timings } from './views.js';

/**
 * How long a steady cluster goes on light looks (STEADY_LOOK_MS apart) at most before a whole pass looks again at
 * every member and recomputes its plan and status. What neither a raft entry nor a change the cluster controller
 * is told of shows is seen only by a whole pass, so up to this much later: a follower the operator can no longer
 * reach while its pod stays Ready (its silence is timed from then), a follower defragmented by hand (its size in
 * status), a TLS Secret replaced or deleted (read, not watched), a node added or relabelled (only a node holding a
 * member, and only its state, wakes a cluster: spreading and placement onto a new node wait), a taken-over
 * cluster's CoreOS operator active again. Each is acted on later, never sooner or wrongly. What changes with time
 * alone is not left to this bound: nothing being timed is a condition of a light look (nothingTimed), and the
 * certificates' renewal brings the next whole look forward (`record`'s dueInMs).
 */
export const WHOLE_LOOK_EVERY_MS = 120_000;

interface Steady {
  /** The EtcdCluster's resourceVersion the whole pass saw: any change to the object since asks for a whole pass. */
  clusterVersion: string;
  leaderUrl: string;
  leader: EtcdStatus;
  /** When the next whole look is due at the latest (the clock `record` and `unchanged` are given). */
  wholeByMs: number;
}

/**
 * Whether nothing of the cluster is being timed: no member silent, stranded, stopping or stalled, no claim in its
 * grace, the member list not unheard. While something is, the plan can change with time alone, so no light look
 * stands in for a whole pass. (The time since a NOSPACE disarm only ever grows, and a new alarm moves the index.)
 */
export function nothingTimed(t: Timings): boolean {
  return t.unheardForMs === undefined
    && [t.silentForMs, t.strandedForMs, t.unclaimedForMs, t.stoppingForMs, t.stalledForMs].every((timed) => Object.keys(timed).length === 0);
}

/**
 * The light look of a steady cluster, which an idle operator spends most of its CPU on (issue 36): one status call
 * to the leader instead of a member list, a status call to every member, a plan and a status computed again. The
 * leader's status carries its raft term and index, the alarms (etcd's raft-replicated alarm list, as `errors`) and
 * its database's size: a member added or removed, an alarm raised or disarmed, a write, a compaction, a leader
 * elected, each moves the term or the index. So a leader whose status is what the last whole pass saw, in a
 * cluster whose object did not change and of which the controller was told no change (its pods, Services,
 * budget, claims, restores, the state of its members' nodes: any such change queues a whole pass,
 * ReconcileContext.timedOnly), is a cluster whose plan is still Steady, but for what WHOLE_LOOK_EVERY_MS bounds.
 * It takes no action: whatever is to be done is planned by a whole pass.
 */
export class SteadyLooks {
  private readonly steady = new Map<string, Steady>();

  /**
   * After a whole pass that planned Steady with every member answering and nothing timed, and wrote no status (it
   * holds). `dueInMs`: something the whole pass does at a time of its own (auto TLS's renewal), so the next whole
   * look comes by then.
   */
  record(key: string, clusterVersion: string | undefined, statuses: ReadonlyMap<string, EtcdStatus>, urlOf: (member: string) => string, nowMs: number, dueInMs?: number): void {
    const leader = [...statuses].find(([, s]) => s.leaderId !== '' && s.leaderId === s.memberId);
    if (!leader || clusterVersion === undefined) {
      this.steady.delete(key);
      return;
    }
    const wholeByMs = nowMs + Math.min(WHOLE_LOOK_EVERY_MS, dueInMs ?? WHOLE_LOOK_EVERY_MS);
    this.steady.set(key, { clusterVersion, leaderUrl: urlOf(leader[0]), leader: leader[1], wholeByMs });
  }

  forget(key: string): void {
    this.steady.delete(key);
  }

  has(key: string): boolean {
    return this.steady.has(key);
  }

  /**
   * Whether the cluster is as the last whole pass left it: its object unchanged, its leader answering with the
   * status it had then, and the look after this one still not past the next whole look's time (so that no timer
   * firing a little early buys a light look more). Anything else (no answer included) is a whole pass's to look at.
   */
  async unchanged(key: string, clusterVersion: string | undefined, etcd: Pick<EtcdClient, 'status'>, nowMs: number): Promise<boolean> {
    const last = this.steady.get(key);
    if (!last || last.clusterVersion !== clusterVersion || nowMs + STEADY_LOOK_MS > last.wholeByMs) return false;
    const now = await etcd.status(last.leaderUrl).catch(() => undefined);
    return now !== undefined && isDeepStrictEqual(now, last.leader);
  }
}

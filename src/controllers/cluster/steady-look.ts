import { isDeepStrictEqual } from 'node:util';
import type { EtcdClient, EtcdStatus } from '../../etcd/client.js';

/**
 * How long a steady cluster goes on light looks (STEADY_LOOK_MS apart) before a whole pass looks again at every
 * member and recomputes its plan and status. What no raft entry and no watched object changes is seen only by a
 * whole pass: a follower the operator can no longer reach while its pod stays Ready (its silence is timed from
 * then), a TLS Secret replaced (read, not watched), time itself (certificate renewal). Two minutes bound how late.
 */
export const WHOLE_LOOK_EVERY_MS = 120_000;

interface Steady {
  /** The EtcdCluster's resourceVersion the whole pass saw: any change to the object since asks for a whole pass. */
  clusterVersion: string;
  leaderUrl: string;
  leader: EtcdStatus;
  wholeAtMs: number;
}

/**
 * The light look of a steady cluster, which an idle operator spends most of its CPU on (issue 36): one status call
 * to the leader instead of a member list, a status call to every member, a plan and a status computed again. The
 * leader's status carries its raft term and index, the alarms (etcd's raft-replicated alarm list, as `errors`) and
 * its database's size: a member added or removed, an alarm raised or disarmed, a write, a compaction, a leader
 * elected, each moves the term or the index. So a leader whose status is what the last whole pass saw, in a
 * cluster whose object and watched objects (pods, claims, nodes, Services: any change of theirs queues a whole
 * pass, ReconcileContext.timedOnly) did not change, is a cluster whose plan is still Steady. It takes no action:
 * whatever is to be done is planned by a whole pass.
 */
export class SteadyLooks {
  private readonly steady = new Map<string, Steady>();

  /** After a whole pass that planned Steady with every member answering, and wrote no status (it holds). */
  record(key: string, clusterVersion: string | undefined, statuses: ReadonlyMap<string, EtcdStatus>, urlOf: (member: string) => string, nowMs: number): void {
    const leader = [...statuses].find(([, s]) => s.leaderId !== '' && s.leaderId === s.memberId);
    if (!leader || clusterVersion === undefined) {
      this.steady.delete(key);
      return;
    }
    this.steady.set(key, { clusterVersion, leaderUrl: urlOf(leader[0]), leader: leader[1], wholeAtMs: nowMs });
  }

  forget(key: string): void {
    this.steady.delete(key);
  }

  /**
   * Whether the cluster is as the last whole pass left it: recorded steady less than WHOLE_LOOK_EVERY_MS ago, its
   * object unchanged, and its leader answering with the status it had then. Anything else (no answer included)
   * is a whole pass's to look at.
   */
  async unchanged(key: string, clusterVersion: string | undefined, etcd: Pick<EtcdClient, 'status'>, nowMs: number): Promise<boolean> {
    const last = this.steady.get(key);
    if (!last || last.clusterVersion !== clusterVersion || nowMs - last.wholeAtMs >= WHOLE_LOOK_EVERY_MS) return false;
    const now = await etcd.status(last.leaderUrl).catch(() => undefined);
    return now !== undefined && isDeepStrictEqual(now, last.leader);
  }
}

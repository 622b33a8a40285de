import type { V1Node, V1Pod, V1Taint, V1Toleration } from '@kubernetes/client-node';
import type { ClusterSpec } from '../../api/etcd-cluster.js';
import { nodeState } from '../../k8s/node-state.js';
import { byName } from '../../runtime/order.js';

/** A move that left the members as crowded as before is not tried again, in the same situation, for this long. */
const RETRY_AFTER_MS = 10 * 60_000;
/**
 * etcd's "not now" to a move (a member reconnected under 5 s ago) lasts seconds; one that lasts this long says a
 * member's link is not healthy in etcd's eyes, which adding a member cannot mend: the move counts as tried.
 */
const REFUSED_FOR_MS = 60_000;

const tolerates = (tolerations: V1Toleration[], taint: V1Taint): boolean => tolerations.some((t) =>
  (t.key === undefined ? t.operator === 'Exists' : t.key === taint.key && (t.operator === 'Exists' || (t.value ?? '') === (taint.value ?? '')))
  && (t.effect === undefined || t.effect === taint.effect));

/**
 * Whether a member pod could go to the node by the spec's terms and the node's: Ready, schedulable, matching
 * the spec's nodeSelector, with no taint the pods do not tolerate. The scheduler has the last word (resources,
 * volume topology, an explicit affinity are not judged here).
 */
function fitsSpec(spec: ClusterSpec, node: V1Node): boolean {
  const { lost, draining } = nodeState(node);
  if (lost || draining) return false;
  if (!Object.entries(spec.pod?.nodeSelector ?? {}).every(([k, v]) => node.metadata?.labels?.[k] === v)) return false;
  const tolerations = spec.pod?.tolerations ?? [];
  return (node.spec?.taints ?? []).every((t) => t.effect === 'PreferNoSchedule' || tolerates(tolerations, t));
}

/**
 * Nodes a member pod could go to and that hold none of the cluster's members. With an explicit affinity,
 * placement is the user's, and none is offered.
 */
export function freeNodes(spec: ClusterSpec, pods: V1Pod[], nodes: V1Node[]): string[] {
  if (spec.pod?.affinity) return [];
  const used = new Set(pods.map((p) => p.spec?.nodeName));
  return nodes.filter((n) => fitsSpec(spec, n) && !used.has(n.metadata?.name)).map((n) => n.metadata?.name ?? '').sort();
}

/**
 * Under a hard one-member-per-node rule (the CoreOS `antiAffinity: true`, a required pod anti-affinity on the
 * hostname), the nodes a member could go to, whether they hold a member or not: the planner's measure of how
 * many members can run at all. Undefined without such a rule: `spread: Required` balances members over nodes
 * and zones but places any number of them, and an explicit affinity (which replaces antiAffinity) is the user's.
 * What the scheduler judges beyond fitsSpec (resources, volumes) is seen later, as an Unschedulable pod.
 */
export function hardPlacement(spec: ClusterSpec, nodes: V1Node[]): string[] | undefined {
  if (!spec.pod?.antiAffinity || spec.pod.affinity) return undefined;
  return nodes.filter((n) => fitsSpec(spec, n)).map((n) => n.metadata?.name ?? '').sort();
}

/**
 * Remembers, per cluster, the situation (members per node, and the free nodes) in which a member was last
 * added to spread them: if the same situation comes back (the scheduler put the new member beside another
 * after all, and the scale-down removed a crowded one), the move is not made again for a while, so a node
 * the pods cannot use costs one attempt per ten minutes, not a loop.
 */
export class SpreadAttempts {
  private readonly last = new Map<string, { situation: string; atMs: number }>();
  private readonly refusedSince = new Map<string, { situation: string; sinceMs: number }>();

  /** Whether a move may be tried in this situation now. */
  allowed(scope: string, situation: string, nowMs: number): boolean {
    const last = this.last.get(scope);
    return !last || last.situation !== situation || nowMs - last.atMs >= RETRY_AFTER_MS;
  }

  tried(scope: string, situation: string, nowMs: number): void {
    this.last.set(scope, { situation, atMs: nowMs });
    this.refusedSince.delete(scope);
  }

  /**
   * etcd refused the move for now: it is tried again at once, unless etcd has refused it in this situation for
   * REFUSED_FOR_MS. A cluster whose optional move etcd refuses for ever would otherwise never settle (seen in a
   * full run: a restore that never ended, retrying the move every second for minutes).
   */
  refused(scope: string, situation: string, nowMs: number): void {
    const since = this.refusedSince.get(scope);
    if (!since || since.situation !== situation) this.refusedSince.set(scope, { situation, sinceMs: nowMs });
    else if (nowMs - since.sinceMs >= REFUSED_FOR_MS) this.tried(scope, situation, nowMs);
  }

  forget(scope: string): void {
    this.last.delete(scope);
    this.refusedSince.delete(scope);
  }
}

/** The members per node (counts, not names: a replaced member on the same node is the same situation) and the free nodes. */
export function spreadSituation(pods: V1Pod[], free: string[]): string {
  const perNode = new Map<string, number>();
  for (const p of pods) perNode.set(p.spec?.nodeName ?? '', (perNode.get(p.spec?.nodeName ?? '') ?? 0) + 1);
  return JSON.stringify({ perNode: [...perNode].sort(([a], [b]) => byName(a, b)), free });
}

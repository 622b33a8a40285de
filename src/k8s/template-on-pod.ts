import type { V1Pod } from '@kubernetes/client-node';
import type { ClusterSpec } from '../api/etcd-cluster.js';
import { ANNOTATION_POD_TEMPLATE, ANNOTATION_SPEC_GENERATION } from './labels.js';
import { ETCD_CONTAINER } from './member-pod.js';
import { podTemplate, podTemplateDigest } from './pod-template.js';
import { quantityValue } from './quantity.js';

/** The pod template (pod-template.ts) a member pod is on. */
export interface TemplateOnPod {
  /** Its digest; '' for a pod of an earlier version judged on another template than the spec's. */
  digest: string;
  /** Read from the pod's record; otherwise judged, for a pod of an earlier version, which has none. */
  recorded: boolean;
}

/**
 * The template a pod is on: the one it records. A pod of an operator version before the record has none, and an
 * operator upgrade must not roll every member of every cluster for that. Such a pod made from the spec's current
 * generation (ANNOTATION_SPEC_GENERATION) was rendered from this very spec: it is on the spec's template. One made
 * from an earlier generation is on it if it carries everything the spec's template renders (carriesTemplate):
 * a change made to spec.pod before the upgrade, which its operator never applied, still reaches it, and what
 * Kubernetes added to the pod is no difference. Once judged on the spec's template, it gets the record (a patch
 * of its metadata, no restart), and every later change is told by the record alone.
 */
export function templateOnPod(pod: V1Pod, spec: ClusterSpec, cluster: string, generation: number): TemplateOnPod {
  const recorded = pod.metadata?.annotations?.[ANNOTATION_POD_TEMPLATE];
  if (recorded !== undefined) return { digest: recorded, recorded: true };
  const madeFromThisSpec = generation > 0 && Number(pod.metadata?.annotations?.[ANNOTATION_SPEC_GENERATION] ?? 0) === generation;
  return { digest: madeFromThisSpec || carriesTemplate(pod, spec, cluster) ? podTemplateDigest(spec, cluster) : '', recorded: false };
}

/**
 * Whether a pod carries every value the spec's template renders. One-sided on purpose: admission and defaulting
 * add to a pod (tolerations, a LimitRange's resources, a default PriorityClass, fields of an env source), never
 * take the user's values away, so only a value the spec gives and the pod lacks or holds otherwise is a change.
 * What this cannot tell is a value removed from the spec before the upgrade: the pod keeps it until the next
 * change of spec.pod rolls it. Every operator version put these fields on the pod as the spec gave them, but for
 * the spread constraints, which came later (issue 18): a pod without any is not judged by them.
 */
function carriesTemplate(pod: V1Pod, spec: ClusterSpec, cluster: string): boolean {
  const { container, pod: fields } = podTemplate(spec, cluster);
  const etcd = pod.spec?.containers.find((c) => c.name === ETCD_CONTAINER);
  const { topologySpreadConstraints, ...others } = fields;
  const spread = pod.spec?.topologySpreadConstraints?.length ? topologySpreadConstraints : undefined;
  return carries(etcd?.env, container.env, equal) && carries(etcd?.resources, container.resources, sameQuantity)
    && carries(pod.spec, { ...others, topologySpreadConstraints: spread }, equal);
}

type Same = (observed: unknown, rendered: unknown) => boolean;

const equal: Same = (observed, rendered) => observed === rendered;

/** Whether `observed` holds everything `rendered` sets: each field of an object, each element of a list (in any order). */
function carries(observed: unknown, rendered: unknown, same: Same): boolean {
  if (rendered === undefined || rendered === null) return true;
  if (Array.isArray(rendered)) return rendered.every((r) => Array.isArray(observed) && observed.some((o) => carries(o, r, same)));
  if (typeof rendered !== 'object') return same(observed, rendered);
  const fields = (observed !== null && typeof observed === 'object' ? observed : {}) as Record<string, unknown>;
  return Object.entries(rendered).every(([k, v]) => carries(fields[k], v, same));
}

/** The API server writes quantities in its canonical form ("1000m" reads "1", "1024Mi" reads "1Gi"): their values are compared. */
const sameQuantity: Same = (observed, rendered) => {
  const [o, r] = [quantityValue(String(observed)), quantityValue(String(rendered))];
  return o !== undefined && r !== undefined ? Math.abs(o - r) <= 1e-9 * Math.max(Math.abs(o), Math.abs(r)) : observed === rendered;
};

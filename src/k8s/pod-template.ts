import type { V1Container, V1PodSpec } from '@kubernetes/client-node';
import type { ClusterSpec } from '../api/etcd-cluster.js';
import { clusterLabels } from './labels.js';
import { ZONE_LABEL } from './node-state.js';
import { objectDigest } from './object-digest.js';
import { memberPodSecurity } from './security.js';

/**
 * What of a member pod comes from spec.pod and takes a new pod to change: a running pod keeps these (its
 * resources change in place only through the resize subresource of recent Kubernetes, not relied on here), and
 * etcd reads its environment once at start. Labels and annotations are not here: they change on the running pod
 * (pod-metadata.ts). Nor are probes, images or flags: what the operator itself puts into every pod changes with
 * the operator, and running members get it when they are next made, not in a roll of every cluster on upgrade.
 * The security context is the exception: the "restricted" defaults under the user's are rendered here, so members
 * of earlier versions, which ran as root, roll onto them (replaced, not restarted on their data: see the planner).
 */
export interface PodTemplate {
  /** The etcd container's. */
  container: Pick<V1Container, 'env' | 'resources'>;
  pod: Pick<V1PodSpec, 'affinity' | 'topologySpreadConstraints' | 'nodeSelector' | 'tolerations' | 'securityContext' | 'priorityClassName'>;
}

/** The failure domains members spread over, widest first. */
const SPREAD_KEYS = [ZONE_LABEL, 'kubernetes.io/hostname'];

/**
 * Where members go. An explicit affinity is the user's placement, taken as it is. Otherwise members spread over
 * zones, then nodes, at most one apart: as a preference, so that a cluster larger than the topology still
 * schedules, or as a rule with `spread: Required`. CoreOS's deprecated `antiAffinity: true` keeps its meaning:
 * never two members on one node.
 */
function placementOf(spec: ClusterSpec, cluster: string): Pick<V1PodSpec, 'affinity' | 'topologySpreadConstraints'> {
  if (spec.pod?.affinity) return { affinity: spec.pod.affinity };
  const labelSelector = { matchLabels: clusterLabels(cluster) };
  const whenUnsatisfiable = spec.pod?.spread === 'Required' ? 'DoNotSchedule' : 'ScheduleAnyway';
  return {
    topologySpreadConstraints: SPREAD_KEYS.map((topologyKey) => ({ maxSkew: 1, topologyKey, whenUnsatisfiable, labelSelector })),
    ...(spec.pod?.antiAffinity
      ? { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector, topologyKey: 'kubernetes.io/hostname' }] } } }
      : {}),
  };
}

/** Quantities as the API's types name them: an integer quantity reads the same as a string. */
const asStrings = (m: Record<string, string | number> | undefined): Record<string, string> | undefined =>
  m && Object.fromEntries(Object.entries(m).map(([k, v]) => [k, String(v)]));

/** The member pod's fields that spec.pod gives it and that take a new pod to change, as the operator renders them. */
export function podTemplate(spec: ClusterSpec, cluster: string): PodTemplate {
  const policy = spec.pod ?? {};
  return {
    container: {
      env: policy.etcdEnv,
      ...(policy.resources ? { resources: { limits: asStrings(policy.resources.limits), requests: asStrings(policy.resources.requests) } } : {}),
    },
    pod: {
      ...placementOf(spec, cluster),
      nodeSelector: policy.nodeSelector,
      tolerations: policy.tolerations,
      securityContext: memberPodSecurity(policy.securityContext),
      priorityClassName: policy.priorityClassName,
    },
  };
}

/**
 * The digest recorded on each member pod (ANNOTATION_POD_TEMPLATE) and compared with the spec's: of what the
 * operator rendered, never of the pod the API server returns, which admission and defaulting change (tolerations
 * added, quantities normalized) and which would then roll for ever.
 */
export const podTemplateDigest = (spec: ClusterSpec, cluster: string): string => objectDigest(podTemplate(spec, cluster));

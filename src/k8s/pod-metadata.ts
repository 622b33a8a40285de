import type { V1Pod } from '@kubernetes/client-node';
import type { ClusterSpec } from '../api/etcd-cluster.js';
import { ANNOTATION_POD_TEMPLATE, ANNOTATION_USER_ANNOTATIONS, ANNOTATION_USER_LABELS, ANNOTATION_VERSION, OPERATOR_ANNOTATION_PREFIX, clusterLabels } from './labels.js';
import { objectDigest } from './object-digest.js';

/**
 * The labels and annotations spec.pod gives member pods. They change on a running pod (a PATCH of its metadata),
 * so a change restarts no member. The operator's own keys are never the user's: not set from the spec, never
 * changed or removed by such a patch.
 */
export interface UserMetadata {
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

type Values = Record<string, string> | undefined;

/** Label keys the operator owns, as the CRD reserves them: its selector's ("app", "etcd_cluster") and "etcd_*". */
const operatorLabel = (key: string): boolean => key in clusterLabels('') || key.startsWith('etcd_');
/**
 * Annotation keys the operator owns. The CRD does not refuse them in spec.pod.annotations (CoreOS manifests may
 * carry any), but on a pod they would pass for the operator's own records (a bootstrap's initial cluster, say).
 */
const operatorAnnotation = (key: string): boolean => key === ANNOTATION_VERSION || key.startsWith(OPERATOR_ANNOTATION_PREFIX);

const withoutOwned = (values: Values, owned: (key: string) => boolean): Record<string, string> =>
  Object.fromEntries(Object.entries(values ?? {}).filter(([k]) => !owned(k)));

/** spec.pod's labels and annotations, less the keys the operator owns. */
export const userMetadata = (spec: ClusterSpec): UserMetadata =>
  ({ labels: withoutOwned(spec.pod?.labels, operatorLabel), annotations: withoutOwned(spec.pod?.annotations, operatorAnnotation) });

/** The record of which keys of a pod are the user's (ANNOTATION_USER_LABELS and _ANNOTATIONS); none for none, as on pods of earlier versions. */
export function userKeysRecord(m: UserMetadata): Record<string, string> {
  const keys = (values: Record<string, string>): string => Object.keys(values).sort().join(',');
  return {
    ...(Object.keys(m.labels).length > 0 ? { [ANNOTATION_USER_LABELS]: keys(m.labels) } : {}),
    ...(Object.keys(m.annotations).length > 0 ? { [ANNOTATION_USER_ANNOTATIONS]: keys(m.annotations) } : {}),
  };
}

/** The keys a pod records as the user's, less any the operator owns (a record edited by hand must not remove those). */
function recordedKeys(pod: V1Pod, record: string, owned: (key: string) => boolean): string[] {
  return (pod.metadata?.annotations?.[record] ?? '').split(',').filter((k) => k !== '' && !owned(k));
}

/** The digest of the user's metadata as each member pod should carry it, with the record of its keys. */
export function specMetadataDigest(spec: ClusterSpec): string {
  const m = userMetadata(spec);
  return objectDigest({ ...m, record: userKeysRecord(m) });
}

/**
 * The same digest of what a pod carries: its values of the keys that are the user's (those it records, and those
 * the spec gives), and its record. Other keys (added by a person or another controller) are not the operator's
 * to judge. Equal to specMetadataDigest when the pod carries the spec's labels and annotations and nothing it
 * records as the user's is left over.
 */
export function podMetadataDigest(pod: V1Pod, spec: ClusterSpec): string {
  const m = userMetadata(spec);
  const carried = (values: Values, keys: string[]): Record<string, string> =>
    Object.fromEntries([...new Set(keys)].flatMap((k) => (values?.[k] === undefined ? [] : [[k, values[k]]])));
  const annotations = pod.metadata?.annotations;
  const record = Object.fromEntries([ANNOTATION_USER_LABELS, ANNOTATION_USER_ANNOTATIONS].flatMap((k) => (annotations?.[k] === undefined ? [] : [[k, annotations[k]]])));
  return objectDigest({
    labels: carried(pod.metadata?.labels, [...recordedKeys(pod, ANNOTATION_USER_LABELS, operatorLabel), ...Object.keys(m.labels)]),
    annotations: carried(annotations, [...recordedKeys(pod, ANNOTATION_USER_ANNOTATIONS, operatorAnnotation), ...Object.keys(m.annotations)]),
    record,
  });
}

/**
 * A JSON merge patch that brings a pod's user metadata to the spec's: the spec's values set, the keys it records
 * and the spec no longer gives removed, the record renewed; with `template`, that digest recorded as the pod
 * template it is on (a pod of an earlier version judged on the spec's). It carries the pod's resourceVersion: made
 * from the pod as observed, it is refused (409) if the pod changed since, rather than remove by an old record.
 */
export function metadataPatch(pod: V1Pod, spec: ClusterSpec, template?: string): { metadata: { resourceVersion?: string; labels: Record<string, string | null>; annotations: Record<string, string | null> } } {
  const m = userMetadata(spec);
  const record = userKeysRecord(m);
  const gone = (recorded: string[], kept: Record<string, string>): Record<string, null> =>
    Object.fromEntries(recorded.filter((k) => !(k in kept)).map((k) => [k, null]));
  return {
    metadata: {
      ...(pod.metadata?.resourceVersion ? { resourceVersion: pod.metadata.resourceVersion } : {}),
      labels: { ...gone(recordedKeys(pod, ANNOTATION_USER_LABELS, operatorLabel), m.labels), ...m.labels },
      annotations: {
        ...gone(recordedKeys(pod, ANNOTATION_USER_ANNOTATIONS, operatorAnnotation), m.annotations), ...m.annotations,
        [ANNOTATION_USER_LABELS]: record[ANNOTATION_USER_LABELS] ?? null,
        [ANNOTATION_USER_ANNOTATIONS]: record[ANNOTATION_USER_ANNOTATIONS] ?? null,
        ...(template ? { [ANNOTATION_POD_TEMPLATE]: template } : {}),
      },
    },
  };
}

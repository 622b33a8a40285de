import { stringify } from 'yaml';

/** A kubeconfig's text with one cluster, user and context (named `name`, else c, u and ctx), that context current. */
export const kubeconfig = (o: { cluster: Record<string, unknown>; user: Record<string, unknown>; namespace?: string; name?: string }): string => stringify({
  apiVersion: 'v1', kind: 'Config', 'current-context': o.name ?? 'ctx',
  clusters: [{ name: o.name ?? 'c', cluster: o.cluster }], users: [{ name: o.name ?? 'u', user: o.user }],
  contexts: [{ name: o.name ?? 'ctx', context: { cluster: o.name ?? 'c', user: o.name ?? 'u', ...(o.namespace ? { namespace: o.namespace } : {}) } }],
});

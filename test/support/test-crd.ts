import { ApiError } from '../../src/runtime/transport.js';
import type { ApiTransport } from '../../src/runtime/transport.js';
import { eventually } from './lab.js';

export const WIDGET_GROUP = 'test.etcd-operator.local';

/**
 * A small CRD with a status subresource, for runtime tests that need a custom resource before the
 * operator's own CRDs exist. Created once; left in place (cluster-scoped, harmless, gone with the lab).
 */
export async function ensureWidgetCrd(transport: ApiTransport): Promise<void> {
  const name = `widgets.${WIDGET_GROUP}`;
  const body = {
    apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name },
    spec: {
      group: WIDGET_GROUP, scope: 'Namespaced',
      names: { plural: 'widgets', singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [{
        name: 'v1', served: true, storage: true, subresources: { status: {} },
        schema: { openAPIV3Schema: { type: 'object', properties: {
          spec: { type: 'object', properties: { size: { type: 'integer' } } },
          status: { type: 'object', properties: { observedSize: { type: 'integer' }, writes: { type: 'integer' } } },
        } } },
      }],
    },
  };
  await transport.call('POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', body).catch((err: unknown) => {
    if (!(err instanceof ApiError && err.status === 409)) throw err;
  });
  await eventually('the Widget CRD to be established', 30_000, async () => {
    const crd = (await transport.call('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`)) as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
  });
}

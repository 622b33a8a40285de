import { ignoreStatus } from '../../src/runtime/transport.js';
import type { ApiTransport } from '../../src/runtime/transport.js';
import type { CrdManifest } from '../../src/api/crds.js';
import { eventually } from './lab.js';

export const WIDGET_GROUP = 'test.etcd-operator.local';

/** A small CRD with a status subresource, for runtime tests that need a custom resource of their own. */
export const widgetCrd: CrdManifest = {
  apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', metadata: { name: `widgets.${WIDGET_GROUP}` },
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

/**
 * Creates the CRD, or updates it to this definition, and waits until it is established. CRDs are
 * cluster-scoped and left in place: harmless, and gone with the lab.
 */
export async function ensureCrd(transport: ApiTransport, crd: CrdManifest): Promise<void> {
  const collection = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';
  const path = `${collection}/${crd.metadata.name}`;
  // Suites running side by side update the same CRD: a write on a stale resourceVersion is tried again.
  await eventually(`${crd.metadata.name} written`, 30_000, async () => {
    try {
      await transport.call('POST', collection, crd);
    } catch (err) {
      ignoreStatus(409)(err);
      const current = (await transport.call('GET', path)) as { metadata: { resourceVersion: string } };
      await transport.call('PUT', path, { ...crd, metadata: { ...crd.metadata, resourceVersion: current.metadata.resourceVersion } });
    }
    return true;
  });
  await eventually(`${crd.metadata.name} established`, 30_000, async () => {
    const got = (await transport.call('GET', path)) as { status?: { conditions?: { type: string; status: string }[] } };
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
  });
}

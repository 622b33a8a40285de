import { GROUP, VERSION, clusterSpec, clusterStatus } from './etcd-cluster.js';
import type { OpenApiSchema } from './schema.js';

const topLevel = (spec: OpenApiSchema, status: OpenApiSchema): OpenApiSchema => ({
  type: 'object',
  required: ['spec'],
  properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec, status },
});

/**
 * A CRD as plain JSON. Not client-node's V1CustomResourceDefinition: its model classes rename fields
 * (`_default`, `xKubernetesValidations`) and its serializer drops the JSON names, CEL rules included.
 */
export interface CrdManifest {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string };
  spec: Record<string, unknown>;
}

export function etcdClusterCrd(): CrdManifest {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `etcdclusters.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: 'etcdclusters', singular: 'etcdcluster', kind: 'EtcdCluster', listKind: 'EtcdClusterList', shortNames: ['etcd'], categories: ['etcd'] },
      versions: [{
        name: VERSION,
        served: true,
        storage: true,
        schema: { openAPIV3Schema: topLevel(clusterSpec.openapi, clusterStatus.openapi) },
        subresources: {
          status: {},
          scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size', labelSelectorPath: '.status.selector' },
        },
        additionalPrinterColumns: [
          { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
          { name: 'Ready', type: 'integer', jsonPath: '.status.readyMembers' },
          { name: 'Version', type: 'string', jsonPath: '.status.currentVersion' },
          { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
          { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
        ],
      }],
    },
  };
}

import { CLUSTER_NAME, GROUP, STORAGE_SHRINK_RULE, VERSION, clusterSpec, clusterStatus } from './etcd-cluster.js';
import { backupSpec, backupStatus, restoreSpec, restoreStatus } from './etcd-backup.js';
import type { OpenApiSchema } from './schema.js';

const topLevel = (spec: OpenApiSchema, status: OpenApiSchema, validations: OpenApiSchema['x-kubernetes-validations']): OpenApiSchema => ({
  type: 'object',
  required: ['spec'],
  properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, metadata: { type: 'object' }, spec, status },
  ...(validations ? { 'x-kubernetes-validations': validations } : {}),
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

interface CrdShape {
  kind: string;
  plural: string;
  shortNames: string[];
  spec: OpenApiSchema;
  status: OpenApiSchema;
  subresources: Record<string, unknown>;
  columns: { name: string; type: 'integer' | 'string' | 'boolean' | 'date'; jsonPath: string }[];
  /** Rules on the whole object: the only place CEL can read metadata.name. */
  validations?: OpenApiSchema['x-kubernetes-validations'];
}

function crd(s: CrdShape): CrdManifest {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${s.plural}.${GROUP}` },
    spec: {
      group: GROUP,
      scope: 'Namespaced',
      names: { plural: s.plural, singular: s.kind.toLowerCase(), kind: s.kind, listKind: `${s.kind}List`, shortNames: s.shortNames, categories: ['etcd-operator'] },
      versions: [{
        name: VERSION, served: true, storage: true,
        schema: { openAPIV3Schema: topLevel(s.spec, s.status, s.validations) },
        subresources: s.subresources,
        additionalPrinterColumns: [...s.columns, { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' }],
      }],
    },
  };
}

export const etcdClusterCrd = (): CrdManifest => crd({
  kind: 'EtcdCluster', plural: 'etcdclusters', shortNames: ['etcd'], spec: clusterSpec.openapi, status: clusterStatus.openapi,
  validations: [{
    rule: `size(self.metadata.name) <= ${CLUSTER_NAME.maxLength} && self.metadata.name.matches('${CLUSTER_NAME.pattern}')`,
    message: CLUSTER_NAME.message,
  }, STORAGE_SHRINK_RULE],
  subresources: { status: {}, scale: { specReplicasPath: '.spec.size', statusReplicasPath: '.status.size', labelSelectorPath: '.status.selector' } },
  columns: [
    { name: 'Size', type: 'integer', jsonPath: '.spec.size' },
    { name: 'Ready', type: 'integer', jsonPath: '.status.readyMembers' },
    { name: 'Version', type: 'string', jsonPath: '.status.currentVersion' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
  ],
});

export const etcdBackupCrd = (): CrdManifest => crd({
  kind: 'EtcdBackup', plural: 'etcdbackups', shortNames: ['etcdbk'], spec: backupSpec.openapi, status: backupStatus.openapi, subresources: { status: {} },
  columns: [
    { name: 'Succeeded', type: 'boolean', jsonPath: '.status.succeeded' },
    { name: 'Revision', type: 'integer', jsonPath: '.status.etcdRevision' },
    { name: 'Last-Success', type: 'date', jsonPath: '.status.lastSuccessDate' },
  ],
});

export const etcdRestoreCrd = (): CrdManifest => crd({
  kind: 'EtcdRestore', plural: 'etcdrestores', shortNames: ['etcdrs'], spec: restoreSpec.openapi, status: restoreStatus.openapi, subresources: { status: {} },
  columns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.etcdCluster.name' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    // A failed restore says why in `kubectl get` (BackupNotFound, ChecksumMismatch, SnapshotPastTarget, ...).
    { name: 'Reason', type: 'string', jsonPath: '.status.reason' },
  ],
});

export const allCrds = (): CrdManifest[] => [etcdClusterCrd(), etcdBackupCrd(), etcdRestoreCrd()];

import type { V1OwnerReference } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/etcd-cluster.js';

/** The controller owner reference to one of our resources: what it owns is collected with it. */
export const ownedBy = (kind: 'EtcdCluster' | 'EtcdBackup' | 'EtcdRestore', name: string, uid: string): V1OwnerReference => ({
  apiVersion: `${GROUP}/${VERSION}`, kind, name, uid, controller: true, blockOwnerDeletion: true,
});

export const ownedByCluster = (name: string, uid: string): V1OwnerReference => ownedBy('EtcdCluster', name, uid);

/** The name of the EtcdCluster that controls an object (a member pod, a Service), in the object's namespace. */
export const owningClusterName = (o: { metadata?: { ownerReferences?: V1OwnerReference[] } }): string | undefined =>
  o.metadata?.ownerReferences?.find((r) => r.controller && r.kind === 'EtcdCluster')?.name;

/**
 * A backup verification's cluster: made by its EtcdRestore and owned by it (no other cluster is), deleted with it once
 * compared. It is not monitored: its one member starting and going would page for a cluster no one runs.
 */
export const isVerificationCluster = (c: { metadata: { ownerReferences?: { kind: string }[] } }): boolean =>
  c.metadata.ownerReferences?.some((r) => r.kind === 'EtcdRestore') ?? false;

import type { V1OwnerReference } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/etcd-cluster.js';

/** The controller owner reference to one of our resources: what it owns is collected with it. */
export const ownedBy = (kind: 'EtcdCluster' | 'EtcdBackup' | 'EtcdRestore', name: string, uid: string): V1OwnerReference => ({
  apiVersion: `${GROUP}/${VERSION}`, kind, name, uid, controller: true, blockOwnerDeletion: true,
});

export const ownedByCluster = (name: string, uid: string): V1OwnerReference => ownedBy('EtcdCluster', name, uid);

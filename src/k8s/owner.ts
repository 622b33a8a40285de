import type { V1OwnerReference } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/etcd-cluster.js';

/** The controller owner reference to an EtcdCluster: its objects are collected with it. */
export const ownedByCluster = (name: string, uid: string): V1OwnerReference => ({
  apiVersion: `${GROUP}/${VERSION}`, kind: 'EtcdCluster', name, uid, controller: true, blockOwnerDeletion: true,
});

import type { V1Secret } from '@kubernetes/client-node';
import type { ClusterSpec } from '../api/etcd-cluster.js';
import type { ClusterAddress } from '../etcd/identity.js';
import { clusterLabels } from './labels.js';
import { ownedByCluster } from './owner.js';

/** The Secrets a TLS cluster uses, whoever made them. */
export interface TlsSecretNames {
  /** The peer certificate of every member. */
  peer: string;
  /** The certificate members present to clients. */
  server: string;
  /** The client certificate the operator presents. */
  operator: string;
  /** Made and renewed by the operator (spec.TLS.auto). */
  auto: boolean;
}

/** The file names inside each Secret, as the CoreOS operator defined them. */
export const SECRET_KEYS = {
  peer: { cert: 'peer.crt', key: 'peer.key', ca: 'peer-ca.crt' },
  server: { cert: 'server.crt', key: 'server.key', ca: 'server-ca.crt' },
  operator: { cert: 'etcd-client.crt', key: 'etcd-client.key', ca: 'etcd-client-ca.crt' },
} as const;

export type SecretRole = keyof typeof SECRET_KEYS;

/** Where member pods mount the peer and server Secrets (the CoreOS paths). */
export const MEMBER_TLS_DIR = { peer: '/etc/etcdtls/member/peer-tls', server: '/etc/etcdtls/member/server-tls' } as const;

export function tlsSecretNames(cluster: string, spec: ClusterSpec): TlsSecretNames | undefined {
  const tls = spec.TLS;
  if (tls?.static) return { peer: tls.static.member.peerSecret, server: tls.static.member.serverSecret, operator: tls.static.operatorSecret, auto: false };
  if (tls?.auto) return { peer: `${cluster}-peer-tls`, server: `${cluster}-server-tls`, operator: `${cluster}-client-tls`, auto: true };
  return undefined;
}

/**
 * Where a cluster's members are reached: its name and namespace, its DNS domain (its spec's, else the operator's), TLS or
 * not. An empty ClusterDomain is unset: the CoreOS operator writes "" into every spec it updates (a Go string field).
 */
export const clusterAddress = (cluster: string, namespace: string, spec: ClusterSpec, defaultDomain: string): ClusterAddress => ({
  cluster, namespace, domain: spec.pod?.ClusterDomain || defaultDomain, tls: tlsSecretNames(cluster, spec) !== undefined,
});

export const caSecretName = (cluster: string): string => `${cluster}-ca`;

/** The names each member certificate must carry: every member under the headless Service, and the client Service. */
export function memberAltNames(a: ClusterAddress): string[] {
  const client = `${a.cluster}-client`;
  return [
    `*.${a.cluster}.${a.namespace}.svc`, `*.${a.cluster}.${a.namespace}.svc.${a.domain}`,
    client, `${client}.${a.namespace}`, `${client}.${a.namespace}.svc`, `${client}.${a.namespace}.svc.${a.domain}`,
    'localhost', '127.0.0.1',
  ];
}

/** Records which issuance a Secret holds: member certificates of one issuance roll together. */
export const ANNOTATION_TLS_GENERATION = 'etcd.database.coreos.com/tls-generation';

/** An operator-made Secret holding a certificate, its key and the CA, under the role's file names. */
export function tlsSecret(
  a: ClusterAddress, clusterUid: string, name: string, role: SecretRole | 'ca', data: { cert: string; key: string; ca: string }, generation: string, resourceVersion?: string,
): V1Secret {
  const keys = role === 'ca' ? { cert: 'ca.crt', key: 'ca.key', ca: '' } : SECRET_KEYS[role];
  const entries: [string, string][] = [[keys.cert, data.cert], [keys.key, data.key], ...(keys.ca ? [[keys.ca, data.ca] as [string, string]] : [])];
  return {
    apiVersion: 'v1', kind: 'Secret', type: 'Opaque',
    metadata: {
      name, namespace: a.namespace, labels: clusterLabels(a.cluster), annotations: { [ANNOTATION_TLS_GENERATION]: generation },
      // Set when replacing a Secret: the update fails on a concurrent change instead of overwriting it.
      ...(resourceVersion ? { resourceVersion } : {}),
      ownerReferences: [ownedByCluster(a.cluster, clusterUid)],
    },
    data: Object.fromEntries(entries.map(([k, v]) => [k, Buffer.from(v, 'utf8').toString('base64')])),
  };
}

/** A Secret's entry as text. */
export const secretText = (s: V1Secret | undefined, key: string): string | undefined => {
  const v = s?.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
};

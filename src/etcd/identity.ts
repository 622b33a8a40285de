import { randomBytes } from 'node:crypto';

export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;

/** Where a cluster's members live in DNS: `<member>.<cluster>.<namespace>.svc.<domain>` (headless Service). */
export interface ClusterAddress {
  cluster: string;
  namespace: string;
  domain: string;
  tls: boolean;
}

/**
 * A fresh member name: `<cluster>-<8 hex>`. Never reused, so a member ID (derived by etcd from the peer URL
 * and the time) and a data directory can never be confused with those of an earlier member.
 */
export const newMemberName = (cluster: string): string => `${cluster}-${randomBytes(4).toString('hex')}`;

export const memberHost = (a: ClusterAddress, member: string): string => `${member}.${a.cluster}.${a.namespace}.svc.${a.domain}`;

export const peerUrl = (a: ClusterAddress, member: string): string =>
  `${a.tls ? 'https' : 'http'}://${memberHost(a, member)}:${PEER_PORT}`;

export const clientUrl = (a: ClusterAddress, member: string): string =>
  `${a.tls ? 'https' : 'http'}://${memberHost(a, member)}:${CLIENT_PORT}`;

/** The cluster's client Service, as a client reaches it. */
export const serviceUrl = (a: ClusterAddress): string =>
  `${a.tls ? 'https' : 'http'}://${a.cluster}-client.${a.namespace}.svc.${a.domain}:${CLIENT_PORT}`;

/** The member a peer URL belongs to (its first DNS label), or undefined for a URL not of this form. */
export function memberOfPeerUrl(url: string): string | undefined {
  try {
    const host = new URL(url).hostname;
    const first = host.split('.')[0];
    return first && first !== host ? first : undefined;
  } catch {
    return undefined;
  }
}

/** etcd's --initial-cluster value for a set of members. */
export const initialCluster = (a: ClusterAddress, members: readonly string[]): string =>
  members.map((m) => `${m}=${peerUrl(a, m)}`).join(',');

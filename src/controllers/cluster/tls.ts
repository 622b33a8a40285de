import type { SecureContextOptions } from 'node:tls';
import { rfc3339 } from '../../runtime/time.js';
import type { EtcdClient } from '../../etcd/client.js';
import type { ClusterAddress } from '../../etcd/identity.js';
import { issueCa, issueLeaf, notAfter } from '../../tls/certificates.js';
import type { Issued } from '../../tls/certificates.js';
import { ANNOTATION_TLS_GENERATION, SECRET_KEYS, caSecretName, memberAltNames, secretText, tlsSecret } from '../../k8s/tls-secrets.js';
import type { SecretRole, TlsSecretNames } from '../../k8s/tls-secrets.js';
import type { NamedSecrets } from './named-secrets.js';

const DAY = 86_400_000;

export interface AutoTlsPolicy {
  /** Lifetime of the member and client certificates. */
  validityMs: number;
  /** Certificates this close to expiry are reissued, and the members roll onto them. */
  renewBeforeMs: number;
  caValidityMs: number;
}

export const DEFAULT_AUTO_TLS: AutoTlsPolicy = { validityMs: 90 * DAY, renewBeforeMs: 30 * DAY, caValidityMs: 3650 * DAY };

/** A cluster's configuration cannot be acted on as it stands (a Secret missing, say): said in status, retried with backoff. */
export class ConfigurationError extends Error {
  constructor(readonly reason: string, message: string) {
    super(message);
    this.name = 'ConfigurationError';
  }
}

const ROLES: SecretRole[] = ['peer', 'server', 'operator'];

/** The certificates' generation in force, and when the first of them is to be renewed (ms since the epoch). */
export interface AutoTls {
  generation: string;
  renewAtMs: number;
}

/**
 * spec.TLS.auto: the cluster's CA (made once, never rotated by the operator) and the peer, server and client
 * certificates it signs, reissued together before they expire. Answers the generation the members should hold,
 * and when it is to be renewed.
 */
export async function ensureAutoTls(
  secrets: NamedSecrets, a: ClusterAddress, clusterUid: string, names: TlsSecretNames, policy: AutoTlsPolicy, now: number, memberPods: number,
): Promise<AutoTls> {
  const leaves = await Promise.all(ROLES.map((role) => secrets.get(a.namespace, names[role])));
  let ca = await secrets.get(a.namespace, caSecretName(a.cluster));
  if (!ca) {
    // Running members trust the CA they started with: certificates from a new one would be refused between them
    // and by them (an outage the operator cannot see through, its own client refused too). A new CA is made only
    // where nothing trusts the old one: no certificate of it left, no member pod.
    const left = leaves.flatMap((s) => (s?.metadata?.name ? [s.metadata.name] : []));
    if (left.length > 0 || memberPods > 0) {
      const remaining = left.length > 0 ? `the Secrets it signed (${left.join(', ')}) and then ` : '';
      throw new ConfigurationError('CASecretMissing', `Secret ${caSecretName(a.cluster)} (the cluster's CA) is gone while ${memberPods > 0 ? 'the members trust it' : 'certificates it signed remain'}: `
        + `restore it. If it is lost for good: with volumes, delete ${remaining}every member pod at once (kubectl delete pod -l etcd_cluster=${a.cluster}); a new CA is made and `
        + 'the members restart on their data trusting it (a short outage). Without volumes a member restarted loses its data: restore the cluster from a backup instead');
    }
    const issued = issueCa(`${a.cluster}-ca`, policy.caValidityMs);
    ca = await secrets.create(a.namespace, tlsSecret(a, clusterUid, caSecretName(a.cluster), 'ca', { ...issued, ca: issued.cert }, rfc3339(now)));
  }
  const caPair: Issued = { cert: secretText(ca, 'ca.crt') ?? '', key: secretText(ca, 'ca.key') ?? '' };
  const generations = leaves.map((s) => s?.metadata?.annotations?.[ANNOTATION_TLS_GENERATION]);
  // When each certificate is to be renewed; NaN for one missing.
  const renewals = ROLES.map((role, i) => {
    const cert = secretText(leaves[i], SECRET_KEYS[role].cert);
    return cert === undefined ? Number.NaN : notAfter(cert).getTime() - policy.renewBeforeMs;
  });
  const fresh = renewals.every((renewAtMs, i) => generations[i] === generations[0] && renewAtMs > now);
  if (fresh && generations[0]) return { generation: generations[0], renewAtMs: Math.min(...renewals) };

  const generation = rfc3339(now);
  const altNames = memberAltNames(a);
  const issued: Record<SecretRole, Issued> = {
    peer: issueLeaf(caPair, { commonName: `${a.cluster}-peer`, altNames, usage: ['server', 'client'], validForMs: policy.validityMs }),
    // etcd's gateway on the client port dials the member itself with this certificate: it is a client one too.
    server: issueLeaf(caPair, { commonName: `${a.cluster}-server`, altNames, usage: ['server', 'client'], validForMs: policy.validityMs }),
    operator: issueLeaf(caPair, { commonName: `${a.cluster}-client`, altNames: [], usage: ['client'], validForMs: policy.validityMs }),
  };
  for (const [i, role] of ROLES.entries()) {
    const resourceVersion = leaves[i]?.metadata?.resourceVersion;
    const body = tlsSecret(a, clusterUid, names[role], role, { ...issued[role], ca: caPair.cert }, generation, resourceVersion);
    await (resourceVersion ? secrets.replace(a.namespace, body) : secrets.create(a.namespace, body));
  }
  return { generation, renewAtMs: now + policy.validityMs - policy.renewBeforeMs };
}

/**
 * spec.TLS.static: the three Secrets the user named must exist before a member is made (a pod mounting a missing
 * one waits in ContainerCreating, saying nothing the cluster's status shows). Every missing one is named.
 */
export async function requireStaticTls(secrets: NamedSecrets, namespace: string, names: TlsSecretNames): Promise<void> {
  const roles = { peer: 'the members\' peer certificate', server: 'the members\' server certificate', operator: 'the operator\'s client certificate' } as const;
  const missing: string[] = [];
  for (const role of ROLES) {
    if (!(await secrets.get(namespace, names[role]))) missing.push(`${names[role]} (${roles[role]})`);
  }
  if (missing.length > 0) {
    throw new ConfigurationError('SecretMissing', `spec.TLS.static names Secrets that do not exist in namespace ${namespace}: ${missing.join(', ')}`);
  }
}

/**
 * The etcd client for each cluster: the plain one, or one presenting the cluster's operator certificate. A client
 * is rebuilt only when its Secret changes.
 */
export class EtcdClients {
  private readonly cache = new Map<string, { client: EtcdClient; version: string }>();

  constructor(
    private readonly plain: EtcdClient,
    private readonly withTls: (tls: SecureContextOptions) => EtcdClient,
    private readonly secrets: NamedSecrets,
  ) {}

  async forCluster(namespace: string, names: TlsSecretNames | undefined): Promise<EtcdClient> {
    if (!names) return this.plain;
    const key = `${namespace}/${names.operator}`;
    const cached = this.cache.get(key);
    const secret = await this.secrets.get(namespace, names.operator);
    if (!secret) throw new ConfigurationError('SecretMissing', `Secret ${names.operator} (the operator's client certificate) does not exist`);
    const version = secret.metadata?.resourceVersion ?? '';
    if (cached?.version === version) return cached.client;
    const k = SECRET_KEYS.operator;
    const [cert, keyPem, ca] = [secretText(secret, k.cert), secretText(secret, k.key), secretText(secret, k.ca)];
    if (!cert || !keyPem || !ca) throw new ConfigurationError('SecretIncomplete', `Secret ${names.operator} needs ${k.cert}, ${k.key} and ${k.ca}`);
    const client = this.withTls({ cert, key: keyPem, ca });
    this.cache.set(key, { client, version });
    return client;
  }
}

import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, dirname, resolve } from 'node:path';
import { kubeConfigCredentials } from '../runtime/credentials.js';
import type { ApiCredentials, ApiRequestOptions } from '../runtime/credentials.js';

// Read here rather than by the Kubernetes client: loading the client costs the operator some 65 MiB and a second
// of CPU at every start, for the few fields below. A user authenticated by an exec plugin or an auth provider
// (cloud logins) is left to the client, loaded then.

const SERVICE_ACCOUNT = '/var/run/secrets/kubernetes.io/serviceaccount';
/** Files a kubelet rotates (a projected service-account token, a client certificate) are read again after this long, as client-go does. */
const REREAD_MS = 60_000;

interface ClusterEntry {
  server?: string; 'certificate-authority'?: string; 'certificate-authority-data'?: string;
  'insecure-skip-tls-verify'?: boolean; 'tls-server-name'?: string;
}
interface UserEntry {
  token?: string; tokenFile?: string; username?: string; password?: string; as?: string; 'as-groups'?: string[];
  'client-certificate'?: string; 'client-certificate-data'?: string; 'client-key'?: string; 'client-key-data'?: string;
  exec?: unknown; 'auth-provider'?: unknown;
}
interface ContextEntry { cluster?: string; user?: string; namespace?: string }
/** A kubeconfig file's entries, each name resolved against the file's directory where it names a file. */
interface KubeConfigFile {
  'current-context'?: string;
  clusters?: { name: string; cluster?: ClusterEntry }[];
  users?: { name: string; user?: UserEntry }[];
  contexts?: { name: string; context?: ContextEntry }[];
}

/**
 * The named kubeconfig; else, as kubectl and the Kubernetes client look: the files $KUBECONFIG lists (the first
 * to name an entry wins), ~/.kube/config, or the pod's service account.
 */
export async function loadKubeConfig(path: string | undefined): Promise<ApiCredentials> {
  const files = path ? [path] : process.env.KUBECONFIG ? process.env.KUBECONFIG.split(delimiter).filter((f) => f !== '') : [resolve(homedir(), '.kube/config')];
  const existing = path ? files : files.filter((f) => existsSync(f));
  if (existing.length === 0) {
    if (process.env.KUBERNETES_SERVICE_HOST && existsSync(`${SERVICE_ACCOUNT}/token`)) return inCluster();
    throw new Error(`no kubeconfig: none of ${files.join(', ')} exists, and this is not a pod with a service account`);
  }
  const merged = await merge(existing);
  const contextName = merged['current-context'];
  const context = merged.contexts?.find((c) => c.name === contextName)?.context;
  if (!context) throw new Error(`kubeconfig ${existing.join(':')}: no current context${contextName ? ` (${contextName} is not defined)` : ''}`);
  const cluster = merged.clusters?.find((c) => c.name === context.cluster)?.cluster;
  if (!cluster?.server) throw new Error(`kubeconfig ${existing.join(':')}: context ${contextName ?? ''} names no cluster with a server`);
  const user = merged.users?.find((u) => u.name === context.user)?.user ?? {};
  if (user.exec !== undefined || user['auth-provider'] !== undefined) return pluginCredentials(path);
  return credentialsOf(cluster.server, context.namespace, cluster, user);
}

/** Credentials from a cluster and user entry: TLS material, a bearer token or a password, impersonation. */
function credentialsOf(server: string, namespace: string | undefined, cluster: ClusterEntry, user: UserEntry): ApiCredentials {
  const tls = tlsOptions(cluster, user);
  const fromFile = user.tokenFile ? rereadEvery(REREAD_MS, user.tokenFile) : undefined;
  const token = fromFile ? () => fromFile().toString('utf8').trim() : user.token ? () => user.token ?? '' : undefined;
  const basic = user.username !== undefined ? Buffer.from(`${user.username}:${user.password ?? ''}`).toString('base64') : undefined;
  return {
    server, ...(namespace ? { namespace } : {}),
    apply: (options) => {
      Object.assign(options, tls());
      if (token) options.headers.authorization = `Bearer ${token()}`;
      else if (basic) options.headers.authorization = `Basic ${basic}`;
      // kubectl's --as and --as-group, kept in the kubeconfig's user.
      if (user.as) options.headers['impersonate-user'] = user.as;
      if (user['as-groups']?.length) (options.headers as Record<string, string | string[]>)['impersonate-group'] = user['as-groups'];
      return Promise.resolve();
    },
  };
}

/**
 * A kubeconfig file's content. JSON (which kubectl reads too, being YAML) is parsed as such; the YAML parser
 * (some 4 MiB of RSS for as long as the process runs) is loaded only for a file that is not JSON. An operator in
 * a pod reads no file.
 */
async function parsed(text: string): Promise<KubeConfigFile> {
  if (text.trimStart().startsWith('{')) return JSON.parse(text) as KubeConfigFile;
  const { parse } = await import('yaml');
  return (parse(text) ?? {}) as KubeConfigFile;
}

/** The files' entries merged as kubectl merges them: the first file to name a cluster, user or context wins. */
async function merge(files: string[]): Promise<KubeConfigFile> {
  const merged: Required<Pick<KubeConfigFile, 'clusters' | 'users' | 'contexts'>> & KubeConfigFile = { clusters: [], users: [], contexts: [] };
  for (const file of files) {
    const config = await parsed(readFileSync(file, 'utf8'));
    const here = (p: string | undefined): string | undefined => (p === undefined ? undefined : resolve(dirname(file), p));
    // An empty current-context is unset, as kubectl reads it: a later file may set it.
    merged['current-context'] ||= config['current-context'];
    for (const c of config.clusters ?? []) {
      if (merged.clusters.some((m) => m.name === c.name)) continue;
      merged.clusters.push({ name: c.name, cluster: { ...c.cluster, 'certificate-authority': here(c.cluster?.['certificate-authority']) } });
    }
    for (const u of config.users ?? []) {
      if (merged.users.some((m) => m.name === u.name)) continue;
      merged.users.push({ name: u.name, user: { ...u.user, tokenFile: here(u.user?.tokenFile), 'client-certificate': here(u.user?.['client-certificate']), 'client-key': here(u.user?.['client-key']) } });
    }
    for (const c of config.contexts ?? []) if (!merged.contexts.some((m) => m.name === c.name)) merged.contexts.push(c);
  }
  return merged;
}

/**
 * The TLS options of a cluster and user entry: inline data (base64), or the files they name, read again each
 * minute as a rotated client certificate (a kubelet's, say) is replaced under its name.
 */
function tlsOptions(cluster: ClusterEntry, user: UserEntry): () => Pick<ApiRequestOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'> {
  const pem = (data: string | undefined, file: string | undefined): (() => Buffer) | undefined => {
    if (data) {
      const decoded = Buffer.from(data, 'base64');
      return () => decoded;
    }
    return file ? rereadEvery(REREAD_MS, file) : undefined;
  };
  const ca = pem(cluster['certificate-authority-data'], cluster['certificate-authority']);
  const cert = pem(user['client-certificate-data'], user['client-certificate']);
  const key = pem(user['client-key-data'], user['client-key']);
  // Only YAML's true: the parser (YAML 1.2) reads kubectl's `no` and `off` as strings, which must not turn it off.
  const insecure = (cluster['insecure-skip-tls-verify'] as unknown) === true;
  return () => ({
    ...(ca ? { ca: ca() } : {}), ...(cert ? { cert: cert() } : {}), ...(key ? { key: key() } : {}),
    ...(insecure ? { rejectUnauthorized: false } : {}),
    ...(cluster['tls-server-name'] ? { servername: cluster['tls-server-name'] } : {}),
  });
}

/** The pod's service account: the API server's Service from the environment, its CA, a token read anew as it rotates. */
function inCluster(): ApiCredentials {
  const host = process.env.KUBERNETES_SERVICE_HOST ?? '';
  const server = `https://${host.includes(':') ? `[${host}]` : host}:${process.env.KUBERNETES_SERVICE_PORT ?? '443'}`;
  const namespace = existsSync(`${SERVICE_ACCOUNT}/namespace`) ? readFileSync(`${SERVICE_ACCOUNT}/namespace`, 'utf8').trim() : undefined;
  return credentialsOf(server, namespace, { 'certificate-authority': `${SERVICE_ACCOUNT}/ca.crt` }, { tokenFile: `${SERVICE_ACCOUNT}/token` });
}

/**
 * A file's content, read again once it is older than `ms`. Read once at the start (a file missing then is an error
 * then); later, a read that fails (the file being replaced) keeps the last content, as client-go's token source does.
 */
function rereadEvery(ms: number, file: string): () => Buffer {
  let value = readFileSync(file);
  let readAt = performance.now();
  return () => {
    if (performance.now() - readAt >= ms) {
      try {
        value = readFileSync(file);
      } catch {
        // kept: the last content read
      }
      readAt = performance.now();
    }
    return value;
  };
}

/** An exec plugin's or auth provider's user: the Kubernetes client runs it. */
async function pluginCredentials(path: string | undefined): Promise<ApiCredentials> {
  const { KubeConfig } = await import('@kubernetes/client-node');
  const kubeConfig = new KubeConfig();
  if (path) kubeConfig.loadFromFile(path);
  else kubeConfig.loadFromDefault();
  return kubeConfigCredentials(kubeConfig);
}

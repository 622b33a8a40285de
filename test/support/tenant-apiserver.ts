import { spawn } from 'node:child_process';
import { owned, stopChild } from './child-stop.js';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';
import { adminKubeConfig, eventually, lab } from './lab.js';

const run = promisify(execFile);

/**
 * A second kube-apiserver of the lab's own build, storing into an etcd of the test's choosing (an EtcdCluster the
 * operator manages, through its client Service): Kubernetes as etcd's client, writing what it writes (objects,
 * Events on short-TTL leases, its master lease), for the data tests. It serves on the host's loopback only, with
 * the lab's certificates; nothing else (no controller, no kubelet) uses it.
 */
export interface TenantApiserver {
  url: string;
  /** The lab's kubectl against it, as the admin; stdout, or a rejection with its stderr. */
  kubectl(args: string[], input?: string): Promise<string>;
  /** Stops it (SIGTERM, then SIGKILL after 10 s) and waits for it to exit. */
  stop(): Promise<void>;
}

export async function startTenantApiserver(t: { after(fn: () => unknown): void }, etcdEndpoint: string, o: { eventTtlSeconds: number }): Promise<TenantApiserver> {
  const labHome = dirname(lab().kubeconfig);
  const pki = join(labHome, 'pki');
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'tenant-apiserver-'));
  const logs: string[] = [];
  const child = owned(spawn(join(dirname(lab().kubectl), 'kube-apiserver'), [
    '--etcd-servers', etcdEndpoint, '--bind-address', '127.0.0.1', '--advertise-address', '127.0.0.1', '--secure-port', String(port),
    '--client-ca-file', join(pki, 'ca.crt'), '--tls-cert-file', join(pki, 'apiserver.crt'), '--tls-private-key-file', join(pki, 'apiserver.key'),
    '--service-account-issuer', 'https://tenant.example', '--service-account-key-file', join(pki, 'sa.pub'), '--service-account-signing-key-file', join(pki, 'sa.key'),
    '--service-cluster-ip-range', '10.200.0.0/24', '--authorization-mode', 'RBAC', '--anonymous-auth=false', '--profiling=false',
    // Events ride on leases of this TTL, shared by every Event written in a stretch of it: short, so they expire under test.
    '--event-ttl', `${o.eventTtlSeconds}s`, '--cert-dir', dir,
  ], { stdio: ['ignore', 'pipe', 'pipe'] }));
  const keep = (c: Buffer): void => { logs.push(c.toString('utf8')); if (logs.length > 200) logs.shift(); };
  child.stdout.on('data', keep);
  child.stderr.on('data', keep);
  const stop = (): Promise<void> => stopChild(child);
  t.after(stop);
  const kc = adminKubeConfig();
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  const kubeconfig = join(dir, 'kubeconfig');
  writeFileSync(kubeconfig, JSON.stringify({
    apiVersion: 'v1', kind: 'Config', 'current-context': 'tenant',
    clusters: [{ name: 'tenant', cluster: { server: `https://127.0.0.1:${port}`, 'certificate-authority': cluster?.caFile ?? join(pki, 'ca.crt'), ...(cluster?.caData ? { 'certificate-authority-data': cluster.caData } : {}) } }],
    users: [{ name: 'admin', user: { ...(user?.certFile ? { 'client-certificate': user.certFile } : {}), ...(user?.certData ? { 'client-certificate-data': user.certData } : {}), ...(user?.keyFile ? { 'client-key': user.keyFile } : {}), ...(user?.keyData ? { 'client-key-data': user.keyData } : {}) } }],
    contexts: [{ name: 'tenant', context: { cluster: 'tenant', user: 'admin' } }],
  }));
  const kubectl = async (args: string[], input?: string): Promise<string> => {
    const call = run(lab().kubectl, ['--kubeconfig', kubeconfig, ...args], { encoding: 'utf8', timeout: 60_000, maxBuffer: 256 * 1024 * 1024 });
    if (input !== undefined) call.child.stdin?.end(input);
    return (await call).stdout;
  };
  await eventually(`the tenant kube-apiserver ready (${logs.join('').slice(-300)})`, 120_000, async () => {
    if (child.exitCode !== null) throw new Error(`kube-apiserver exited ${child.exitCode}: ${logs.join('').slice(-2000)}`);
    return (await kubectl(['get', '--raw', '/readyz']).catch(() => '')).trim() === 'ok' ? true : undefined;
  });
  return { url: `https://127.0.0.1:${port}`, kubectl, stop };
}

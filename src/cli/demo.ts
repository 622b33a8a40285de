/**
 * `etcd-operator demo`: the main job on the local lab. Starts the lab if it is down, installs the CRDs and the
 * operator as a Deployment from this build's image (what `etcd-operator manifests` prints), applies the CoreOS
 * example manifest, shows it come up until Available, and writes and reads a key through its client Service.
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { V1Deployment, V1Service } from '@kubernetes/client-node';
import { GROUP, VERSION } from '../api/etcd-cluster.js';
import type { EtcdCluster } from '../api/etcd-cluster.js';
import { DEFAULT_INSTALL, NAME, installManifests } from '../install/manifests.js';
import { ApiTransport } from '../runtime/transport.js';
import { loadKubeConfig } from './kubeconfig.js';
import { progress } from './progress.js';
import type { Progress } from './progress.js';
import { clusterDetail } from './status-view.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const NAMESPACE = 'default';
const CLUSTER = 'example';

/** Runs a command, showing its JSON log lines (the lab's) as progress; resolves its stdout. */
function run(p: Progress, command: string, args: string[], input?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd: root, stdio: ['pipe', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (c: Buffer) => { stdout += c.toString('utf8'); });
    child.stderr.on('data', (c: Buffer) => {
      stderr += c.toString('utf8');
      for (const line of c.toString('utf8').split('\n').filter((l) => l.startsWith('{'))) {
        try { p.update((JSON.parse(line) as { msg?: string }).msg ?? ''); } catch { /* not a log line */ }
      }
    });
    child.on('error', reject);
    child.on('close', (code) => { if (code === 0) resolve(stdout); else reject(new Error(`${command} ${args.join(' ')} exited ${code ?? '?'}\n${stderr.slice(-2000)}`)); });
    child.stdin.end(input);
  });
}

/** Polls `probe` every 500 ms until it answers a value, reporting each state it passes; bounded. */
async function until<T>(p: Progress, what: string, timeoutMs: number, probe: () => Promise<{ state: string; value?: T }>): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { state, value } = await probe().catch((err: unknown) => ({ state: `waiting (${(err as Error).message.split('\n')[0] ?? ''})`, value: undefined }));
    p.update(state);
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`${what}: not reached in ${timeoutMs / 1000} s (last: ${state})`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

const b64 = (s: string): string => Buffer.from(s, 'utf8').toString('base64');

/** A put then a range through etcd's JSON gateway: what any client of the Service would do. */
async function roundTrip(endpoint: string, key: string, value: string): Promise<string> {
  const post = async (path: string, body: object): Promise<unknown> => {
    const res = await fetch(`${endpoint}${path}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(3000) });
    if (!res.ok) throw new Error(`${path}: HTTP ${res.status}`);
    return res.json();
  };
  await post('/v3/kv/put', { key: b64(key), value: b64(value) });
  const got = (await post('/v3/kv/range', { key: b64(key) })) as { kvs?: { value?: string }[] };
  return Buffer.from(got.kvs?.[0]?.value ?? '', 'base64').toString('utf8');
}

export async function demoCommand(): Promise<number> {
  const p = progress(process.stdout);
  try {
    p.step('local lab, 3 nodes (the first run builds Kubernetes, etcd, CoreDNS, MinIO, Helm and a volume provisioner: about 35 minutes)');
    const kubeconfig = (await run(p, 'bash', ['lab/lab.sh', 'up'])).trim().split('\n').pop() ?? '';
    const { kubectl } = JSON.parse(readFileSync(kubeconfig.replace(/admin\.kubeconfig$/, 'lab.json'), 'utf8')) as { kubectl: string };
    const k = (args: string[], input?: string): Promise<string> => run(p, kubectl, ['--kubeconfig', kubeconfig, ...args], input);
    p.step('operator image from this build');
    const image = (await run(p, 'bash', ['scripts/operator-image.sh'])).trim();
    const api = new ApiTransport(await loadKubeConfig(kubeconfig));
    try {
      p.step(`CRDs, RBAC and the operator Deployment (namespace ${NAMESPACE})`);
      const deploymentPath = `/apis/apps/v1/namespaces/${NAMESPACE}/deployments/${NAME}`;
      const installed = await api.call('GET', deploymentPath).then(() => true, () => false);
      await k(['apply', '-f', '-'], installManifests({ ...DEFAULT_INSTALL, namespace: NAMESPACE, image, imagePullPolicy: 'Never' }));
      // A re-run brings a new build under the same tag: restart the operator onto it.
      if (installed) await k(['-n', NAMESPACE, 'rollout', 'restart', `deployment/${NAME}`]);
      await until(p, 'operator ready', 120_000, async () => {
        // As many as the Deployment asks for (two by default: one leads, one stands by), all of the new build.
        const d = (await api.call('GET', deploymentPath)) as V1Deployment;
        const wanted = d.spec?.replicas ?? 1;
        const ready = d.status?.updatedReplicas === wanted && d.status.readyReplicas === wanted && (d.status.replicas ?? 0) === wanted;
        return { state: `${d.status?.readyReplicas ?? 0}/${wanted} ready`, value: ready || undefined };
      });
      p.step(`EtcdCluster ${CLUSTER}: 3 members from examples/etcd-cluster.yaml (a CoreOS manifest, unchanged)`);
      await k(['apply', '-f', 'examples/etcd-cluster.yaml']);
      const clusterPath = `/apis/${GROUP}/${VERSION}/namespaces/${NAMESPACE}/etcdclusters/${CLUSTER}`;
      const cluster = await until(p, 'cluster Available', 240_000, async () => {
        const c = (await api.call('GET', clusterPath)) as EtcdCluster;
        const available = c.status?.conditions?.find((x) => x.type === 'Available')?.status === 'True';
        const state = `${c.status?.phase ?? 'Pending'}, ${c.status?.readyMembers ?? 0}/${c.spec.size} ready${available ? ', Available' : ''}`;
        return { state, value: available && c.status?.readyMembers === c.spec.size ? c : undefined };
      });
      p.done(`${cluster.status?.phase ?? ''}, ${cluster.status?.readyMembers ?? 0}/${cluster.spec.size} ready, leader ${cluster.status?.leader ?? '?'}`);
      p.step(`a key through the client Service ${CLUSTER}-client`);
      const svc = (await api.call('GET', `/api/v1/namespaces/${NAMESPACE}/services/${CLUSTER}-client`)) as V1Service;
      const endpoint = `http://${svc.spec?.clusterIP ?? ''}:2379`;
      const read = await until(p, 'key round trip', 30_000, async () => ({ state: `put and get at ${endpoint}`, value: await roundTrip(endpoint, 'demo-key', 'hello from the etcd operator') }));
      p.done(`demo-key = "${read}"`);
      process.stdout.write(`\n${clusterDetail((await api.call('GET', clusterPath)) as EtcdCluster, [], Date.now())}\n`);
    } finally {
      api.agent.destroy();
    }
    const kctl = `${kubectl} --kubeconfig ${kubeconfig}`;
    process.stdout.write(`
The cluster is up. Try:
  ${kctl} scale etcd/${CLUSTER} --replicas=5          # one member at a time
  node dist/src/cli/main.js status --kubeconfig ${kubeconfig}
  ${kctl} delete $(${kctl} get pod -l etcd_cluster=${CLUSTER} -o name | head -1)   # a member is replaced
  ${kctl} logs deployment/${NAME}                      # the operator's JSON logs
Clean up: lab/lab.sh down   (stops the lab and everything in it)
`);
    return 0;
  } catch (err) {
    p.fail((err as Error).message);
    return 1;
  }
}

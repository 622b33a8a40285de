import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { randomBytes } from 'node:crypto';
import type { TestContext } from 'node:test';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';

/** A node of the lab: its own network namespace, containerd, kubelet and disk. */
export interface LabNode {
  name: string;
  /** Its address on the lab bridge. */
  ip: string;
  /** Its `topology.kubernetes.io/zone` label. */
  zone: string;
  podCIDR: string;
  containerdSocket: string;
}

/** Facts about the running lab, written by `lab/lab.sh up` to `$ETCD_OPERATOR_LAB_HOME/lab.json`. */
export interface LabFacts {
  kubeconfig: string;
  dnsServer: string;
  clusterDomain: string;
  kubernetesVersion: string;
  /** kubectl of the lab's Kubernetes version. */
  kubectl: string;
  etcdImages: string[];
  /** A small image with a shell (Debian's busybox), for test pods. */
  busyboxImage: string;
  /** The host's address on the lab bridge: pods on every node reach servers a test starts there. */
  hostIP: string;
  /** The default StorageClass: node-local volumes from rancher's local-path-provisioner. */
  storageClass: string;
  /** A StorageClass whose volumes grow online (lab/csi: XFS image files on the node's disk): through expandableStorageClass. */
  expandableStorageClass: string;
  /** The external-resizer binary, the last CSI sidecar built (behind the lab on a first build). */
  csiResizer: string;
  nodes: LabNode[];
  /** The MinIO server binary, for S3 backups: through labTool, as it may still be building. */
  minio: string;
  /** The Helm binary, for rendering the chart: through labTool, as it may still be building. */
  helm: string;
  /** State of the build of those and of the CoreOS test bed, which a first `lab up` leaves running behind it. */
  extrasStatus: string;
  /**
   * What lab/build/coreos-operator.sh built for the CoreOS operator's test bed (a JSON file, CoreOSImages), once
   * it is there: through coreosImages. Absent from the facts of a lab started by an older checkout.
   */
  coreos?: string;
  /** The Kubernetes API server's own etcd (client URL on the host): real Kubernetes data, for the codec bench. */
  apiserverEtcd: string;
  /**
   * The linearizability checker of recorded histories (lab/checker), under a hash of its sources: through labTool,
   * as it may still be building. Absent from the facts of a lab started by an older checkout.
   */
  checker?: string;
  /** Prometheus and promtool (the monitoring tests): through labTool, as they may still be building. Absent from the facts of a lab started by an older checkout. */
  prometheus?: string;
  promtool?: string;
}

const labHome = process.env.ETCD_OPERATOR_LAB_HOME ?? '/var/lib/etcd-operator-lab';

/** A path in a node's directory in the lab home (lab/node.sh, node_dir), which the host shares with the node. */
const nodeDir = (node: string, ...path: string[]): string => join(labHome, 'nodes', node, ...path);

/** A directory on a node's own disk (its volumes' file system). */
export const nodeDiskDir = (node: string, ...path: string[]): string => nodeDir(node, 'disk', ...path);

/** Where kubelet mounts a pod's CSI volume on its node (the lab's nodes share the host's mounts, so a test can statfs it). */
export const csiVolumeMount = (node: string, podUid: string, volume: string): string =>
  nodeDir(node, 'kubelet', 'pods', podUid, 'volumes', 'kubernetes.io~csi', volume, 'mount');

let facts: LabFacts | undefined;

/** Throws (failing the test, never skipping it) when no lab is running: `npm test` starts one. */
export function lab(): LabFacts {
  if (!facts) {
    const path = `${labHome}/lab.json`;
    try {
      facts = JSON.parse(readFileSync(path, 'utf8')) as LabFacts;
    } catch (err) {
      throw new Error(`no running lab (${path} unreadable: ${(err as Error).message}); start it with lab/lab.sh up`);
    }
  }
  return facts;
}

/**
 * The path of a tool that a first `lab up` builds behind the lab (MinIO, Helm, the CoreOS test bed's facts, the
 * checker), once it is there: waits while its build is under way (a cold build takes minutes), fails at once if
 * the build failed or none is running.
 */
export async function labTool(tool: 'minio' | 'helm' | 'coreos' | 'csiResizer' | 'checker' | 'prometheus' | 'promtool'): Promise<string> {
  const path = tool === 'coreos' ? coreosFacts() : tool === 'checker' || tool === 'prometheus' || tool === 'promtool' ? namedTool(tool) : lab()[tool];
  const deadline = Date.now() + 40 * 60_000;
  for (;;) {
    if (existsSync(path)) return path;
    const status = existsSync(lab().extrasStatus) ? readFileSync(lab().extrasStatus, 'utf8').trim() : 'no build recorded';
    const builder = /^building (\d+)$/.exec(status)?.[1];
    if (!builder || !alive(Number(builder)) || Date.now() > deadline) throw new Error(`${tool} is not built (${path}): ${status}; lab/lab.sh build builds it`);
    await new Promise((r) => setTimeout(r, 2000));
  }
}

/**
 * A tool lab.json names (the checker under a hash of its sources, lab/build/common.sh's checker_bin; Prometheus and
 * promtool, lab/build/prometheus.sh): `lab/lab.sh up` writes them into the facts of a lab started without.
 */
const namedTool = (tool: 'checker' | 'prometheus' | 'promtool'): string => {
  const path = lab()[tool];
  if (path === undefined) throw new Error(`the lab's facts name no ${tool} (written by an older checkout): lab/lab.sh up writes them again`);
  return path;
};

/** The lab's build cache, as common.sh places it. */
const labCache = (): string => process.env.ETCD_OPERATOR_CACHE ?? join(homedir(), '.cache/etcd-operator-lab');

/** Where lab/build/coreos-operator.sh writes its facts: named by lab.json, else in the cache. */
const coreosFacts = (): string => lab().coreos ?? join(labCache(), 'coreos-operator/images.json');

/** The etcd server binary (or its etcdutl) of a version the lab builds (lab/build/etcd.sh), for tests that run them outside Kubernetes. */
export const etcdBinary = (version: string, tool: 'etcd' | 'etcdutl' = 'etcd'): string => join(labCache(), 'etcd', `v${version}`, tool);

/** The images of the CoreOS operator's test bed (lab/build/coreos-operator.sh). */
export interface CoreOSImages {
  /** The archived CoreOS etcd-operator v0.9.4 (run it with -create-crd=false). */
  operatorImage: string;
  /** For spec.repository: CoreOS names member images `<repository>:v<version>`; one per lab etcd version, with a shell. */
  etcdRepository: string;
  /** The etcd versions packed under etcdRepository, without the v: what spec.version takes. */
  etcdVersions: string[];
  /** For spec.pod.busyboxImage: the members' check-dns init container resolves with it (the lab's busybox cannot). */
  busyboxImage: string;
}

/**
 * The CoreOS test bed's images, once they are built (behind the lab: waits for that build like labTool) and on
 * every running node: imports what a node lacks (`lab.sh import-images`, idempotent, ~1 s per image and node).
 */
export async function coreosImages(): Promise<CoreOSImages> {
  const path = await labTool('coreos');
  await labCommand(['import-images']);
  return JSON.parse(readFileSync(path, 'utf8')) as CoreOSImages;
}

/**
 * The StorageClass whose volumes grow online, once its CSI parts run: its sidecars build behind a first `lab up`
 * (waited for like labTool), then `lab.sh expandable` starts them on every node (idempotent).
 */
export async function expandableStorageClass(): Promise<string> {
  await labTool('csiResizer');
  await labCommand(['expandable']);
  return lab().expandableStorageClass;
}

const alive = (pid: number): boolean => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

/** The PID of a running lab daemon (lab/process.sh records them: `coredns`, `lab-node-2-kubelet`, ...). */
export function labDaemonPid(name: string): number {
  return Number(readFileSync(`${labHome}/run/${name}.pid`, 'utf8').trim());
}

/** The lab script, found from this file's place in dist/test/support, whatever the working directory. */
const labScript = fileURLToPath(new URL('../../../lab/lab.sh', import.meta.url));

/** Runs lab.sh without blocking the test's event loop, so that clients the test runs meanwhile keep running. */
/** Runs a lab.sh command; resolves to what it logged (its stderr: JSON lines), for a test's diagnostics. */
export async function labCommand(args: string[]): Promise<string> {
  const { stderr } = await promisify(execFile)('bash', [labScript, ...args], { timeout: 180_000 });
  return stderr;
}

/** Stops and starts kube-apiserver (new process, new watch cache), waiting until it is ready again. */
export const restartApiServer = async (): Promise<void> => { await labCommand(['restart-apiserver']); };

export function adminKubeConfig(): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromFile(lab().kubeconfig);
  return kc;
}

/** The Pod Security Standard a namespace enforces (its pod-security.kubernetes.io/enforce label). */
export type PodSecurityLevel = 'privileged' | 'baseline' | 'restricted';

/**
 * A namespace of the test's own, deleted (with all it holds) when the test ends. It enforces `podSecurity`
 * through the API server's PodSecurity admission: a pod that breaks the standard is refused.
 */
export async function testNamespace(t: TestContext, prefix = 'test', podSecurity: PodSecurityLevel = 'privileged'): Promise<string> {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const name = `${prefix}-${randomBytes(3).toString('hex')}`;
  const labels = { 'etcd-operator.test/owned': 'true', 'pod-security.kubernetes.io/enforce': podSecurity };
  await core.createNamespace({ body: { metadata: { name, labels } } });
  t.after(async () => {
    await core.deleteNamespace({ name, body: { gracePeriodSeconds: 0 } });
  });
  return name;
}

/** Polls `probe` until it returns a value other than undefined; bounded by `timeoutMs`. A timeout says what `seen` last saw, if given. */
export async function eventually<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, seen?: () => string): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() >= deadline) {
      const detail = lastError instanceof Error ? `: last error ${lastError.message}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${detail}${seen ? `; ${seen()}` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

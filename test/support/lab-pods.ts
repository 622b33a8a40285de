import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { eventually, lab } from './lab.js';
import { isReady } from './cluster-testbed.js';

export const ETCD_BIN = '/usr/local/bin';

/**
 * A single-member etcd server pod on the given node (chosen through the scheduler, by hostname label), its data
 * in /var/lib/etcd/data (onClaim can put a claim there).
 */
export function etcdServerPod(name: string, node: string): V1Pod {
  const peer = 'http://localhost:2380';
  return {
    metadata: { name, labels: { app: name } },
    spec: {
      nodeSelector: { 'kubernetes.io/hostname': node },
      containers: [{
        name: 'etcd',
        image: lab().etcdImages[0],
        command: [
          `${ETCD_BIN}/etcd`, `--name=${name}`, '--data-dir=/var/lib/etcd/data',
          '--listen-client-urls=http://0.0.0.0:2379', '--advertise-client-urls=http://localhost:2379',
          '--listen-peer-urls=http://127.0.0.1:2380', `--initial-advertise-peer-urls=${peer}`, `--initial-cluster=${name}=${peer}`,
        ],
        readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 },
      }],
    },
  };
}

/** A pod of the lab's busybox image running `script` in sh, on the given node (else where the scheduler puts it). */
export function shellPod(name: string, node: string | undefined, script: string): V1Pod {
  return {
    metadata: { name },
    spec: {
      ...(node === undefined ? {} : { nodeSelector: { 'kubernetes.io/hostname': node } }),
      restartPolicy: 'Never',
      containers: [{ name: 'sh', image: lab().busyboxImage, imagePullPolicy: 'Never', command: ['/bin/sh', '-c', script] }],
    },
  };
}

/**
 * The wait, or, when it fails, its error with what the pod went through appended: its phase, where each container
 * stands, and its latest Events. A CI log shows only the failure, so it must say why (an image missing on a node,
 * a pod never scheduled, a container stuck in its init step).
 */
async function told<T>(core: CoreV1Api, namespace: string, name: string, wait: Promise<T>): Promise<T> {
  try {
    return await wait;
  } catch (err) {
    const story = await podStory(core, namespace, name).catch((e: unknown) => `(the pod could not be read: ${String(e)})`);
    throw new Error(`${err instanceof Error ? err.message : String(err)}; ${story}`, { cause: err });
  }
}

/** One line on a pod: node, phase, each container's state, and its last five Events. */
async function podStory(core: CoreV1Api, namespace: string, name: string): Promise<string> {
  const pod = await core.readNamespacedPod({ name, namespace });
  const statuses = [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])];
  const states = statuses.map((c) => {
    const waiting = c.state?.waiting;
    const done = c.state?.terminated;
    const state = waiting ? `waiting ${waiting.reason ?? ''} ${waiting.message ?? ''}` : done ? `exited ${done.exitCode} ${done.reason ?? ''}` : 'running';
    return `${c.name}: ${state.trim()}`;
  });
  const events = (await core.listNamespacedEvent({ namespace, fieldSelector: `involvedObject.name=${name}` })).items
    .slice(-5).map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`);
  return `pod ${name} on ${pod.spec?.nodeName ?? '(no node)'}, ${pod.status?.phase ?? '?'}; ${states.join('; ') || 'no container status'}; events: ${events.join(' | ') || 'none'}`;
}

/** Creates the pod and waits until it is Ready; answers it as it is then. */
export async function readyPod(core: CoreV1Api, namespace: string, pod: V1Pod, timeoutMs = 90_000): Promise<V1Pod> {
  await core.createNamespacedPod({ namespace, body: pod });
  const name = pod.metadata?.name ?? '';
  return told(core, namespace, name, eventually(`pod ${name} Ready`, timeoutMs, async () => {
    const p = await core.readNamespacedPod({ name, namespace });
    return isReady(p) ? p : undefined;
  }));
}

/** Waits until the pod has run to the end; answers it, or throws if it failed. */
export async function finishedPod(core: CoreV1Api, namespace: string, name: string, timeoutMs = 90_000): Promise<V1Pod> {
  const pod = await told(core, namespace, name, eventually(`pod ${name} finished`, timeoutMs, async () => {
    const p = await core.readNamespacedPod({ name, namespace });
    return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
  }));
  if (pod.status?.phase === 'Failed') {
    const logs = await Promise.all((pod.spec?.containers ?? []).map((c) => core.readNamespacedPodLog({ name, namespace, container: c.name }).catch(() => '')));
    throw new Error(`pod ${name} failed: ${JSON.stringify(pod.status.containerStatuses?.map((c) => c.state?.terminated))} ${logs.join(' | ')}`);
  }
  return pod;
}

export const podLog = (core: CoreV1Api, namespace: string, name: string, container?: string): Promise<string> =>
  core.readNamespacedPodLog({ name, namespace, ...(container ? { container } : {}) });

/** The Ready condition of a node: True, False or Unknown (its kubelet stopped reporting). */
export async function nodeReadiness(core: CoreV1Api, node: string): Promise<string | undefined> {
  return (await core.readNode({ name: node })).status?.conditions?.find((c) => c.type === 'Ready')?.status;
}

/** Waits until the node's Ready condition has the given status. */
export const untilReadiness = (core: CoreV1Api, node: string, status: string, timeoutMs = 60_000): Promise<true> =>
  eventually(`node ${node} Ready=${status}`, timeoutMs, async () => ((await nodeReadiness(core, node)) === status ? true : undefined));

/** A claim of the lab's default StorageClass (bound when its first pod is scheduled). */
export async function claim(core: CoreV1Api, namespace: string, name: string): Promise<void> {
  await core.createNamespacedPersistentVolumeClaim({ namespace, body: {
    metadata: { name }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '64Mi' } } },
  } });
}

/** The pod with the claim mounted at `mountPath` in every container. */
export function onClaim(pod: V1Pod, claimName: string, mountPath = '/data'): V1Pod {
  const spec = pod.spec;
  if (!spec) throw new Error('a pod without a spec');
  spec.volumes = [...(spec.volumes ?? []), { name: 'data', persistentVolumeClaim: { claimName } }];
  for (const container of [...(spec.initContainers ?? []), ...spec.containers]) {
    container.volumeMounts = [...(container.volumeMounts ?? []), { name: 'data', mountPath }];
  }
  return pod;
}

/** The directory on its node's disk that holds a bound claim's volume (a `local` PersistentVolume). */
export async function volumeDir(core: CoreV1Api, namespace: string, name: string): Promise<string> {
  const pvc = await core.readNamespacedPersistentVolumeClaim({ name, namespace });
  const pv = await core.readPersistentVolume({ name: pvc.spec?.volumeName ?? '' });
  const path = pv.spec?.local?.path;
  if (!path) throw new Error(`claim ${namespace}/${name} is not on a local volume`);
  return path;
}

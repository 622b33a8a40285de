// Issue 33, restricted pods: members that ran as root keep data only root can read (etcd makes its directories
// 0700). On a volume whose plugin applies no fsGroup (hostPath: local-path's default type in kind and k3s, some NFS
// drivers) a member restarted as uid 65532 on that data could never start, and the data guard once took such a
// directory for "data lost" (a member removed, its claim deleted). Rolled onto "restricted" pods, such members are
// replaced by members on new volumes, never restarted on their own.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, rmSync } from 'node:fs';
import { StorageV1Api } from '@kubernetes/client-node';
import type { V1PersistentVolume } from '@kubernetes/client-node';
import { adminKubeConfig, eventually, lab, nodeDiskDir } from '../support/lab.js';
import { testbed } from '../support/cluster-testbed.js';
import { startOperator } from '../support/operator-process.js';
import { loadedCluster } from '../support/write-load.js';
import { checkLoad } from '../support/load-check.js';

test('members running as root on hostPath volumes (no fsGroup applied) roll onto "restricted" pods by replacement under writes: none restarted on data its new user cannot read, none taken for lost', async (t) => {
  const bed = await testbed(t, 'hostown', 'privileged');
  const storage = adminKubeConfig().makeApiClient(StorageV1Api);
  // Statically provisioned hostPath volumes, three per node (a replacement needs a new one, and a removed member's
  // claim keeps its own for a while), bound when a pod is scheduled. Open to every user, as local-path makes its
  // hostPath directories (0777): kubelet gives a hostPath volume to no fsGroup.
  const className = `hostpath-${bed.namespace}`;
  await storage.createStorageClass({ body: { metadata: { name: className }, provisioner: 'kubernetes.io/no-provisioner', volumeBindingMode: 'WaitForFirstConsumer' } });
  const volumes: V1PersistentVolume[] = lab().nodes.flatMap((node) => [0, 1, 2].map((i) => ({
    metadata: { name: `${className}-${node.name}-${i}` },
    spec: {
      capacity: { storage: '1Gi' }, accessModes: ['ReadWriteOnce'], storageClassName: className, persistentVolumeReclaimPolicy: 'Retain',
      hostPath: { path: nodeDiskDir(node.name, className, String(i)), type: 'Directory' },
      nodeAffinity: { required: { nodeSelectorTerms: [{ matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: [node.name] }] }] } },
    },
  })));
  for (const v of volumes) {
    mkdirSync(v.spec?.hostPath?.path ?? '', { recursive: true });
    chmodSync(v.spec?.hostPath?.path ?? '', 0o777);
  }
  for (const v of volumes) await bed.core.createPersistentVolume({ body: v });
  t.after(async () => {
    for (const v of volumes) await bed.core.deletePersistentVolume({ name: v.metadata?.name ?? '' }).catch(() => undefined);
    await storage.deleteStorageClass({ name: className }).catch(() => undefined);
    for (const node of lab().nodes) rmSync(nodeDiskDir(node.name, className), { recursive: true, force: true });
  });

  const operator = startOperator(t, bed.namespace);
  const name = 'rooted';
  const onHostPath = { persistentVolumeClaimSpec: { storageClassName: className, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } } };
  const { members, load } = await loadedCluster(bed, name, { size: 3, pod: { ...onHostPath, securityContext: { runAsUser: 0 } } }, 240_000, { recorded: true });
  const rootPods = await bed.pods(name);
  assert.ok(rootPods.every((p) => p.spec?.securityContext?.runAsUser === 0), 'the members start as root');

  const started = Date.now();
  await bed.transport.call('PATCH', `${bed.path}/${name}`, { spec: { pod: { securityContext: null } } }, 'application/merge-patch+json');
  const rolled = await eventually('every member on a non-root pod', 300_000, async () => {
    const pods = await bed.pods(name);
    const nonRoot = pods.length === 3 && pods.every((p) => p.spec?.securityContext?.runAsUser === 65532);
    return nonRoot && (await bed.settledMembers(name, 3)) ? pods : undefined;
  });
  const seconds = (Date.now() - started) / 1000;
  const now = rolled.map((p) => p.metadata?.name ?? '').sort();
  assert.deepEqual(now.filter((n) => members.includes(n)), [], 'every root member was replaced, none restarted on its own data');
  // Restarted in place, a member's guard finds data it cannot read: ContainerFailed (or, before the guard's fix, DataLost).
  const events = (await bed.core.listNamespacedEvent({ namespace: bed.namespace })).items;
  const failures = events.filter((e) => ['ContainerFailed', 'DataLost', 'MemberDataLost'].includes(e.reason ?? '') || /cannot use its data|its data is gone|data lost/i.test(e.message ?? ''));
  assert.deepEqual(failures.map((e) => `${e.reason ?? ''}: ${e.message ?? ''}`), [], 'no member pod failed on the data root left');
  checkLoad(t, 'rolled from root on hostPath', await load.finish());
  t.diagnostic(`3 root members on hostPath volumes replaced by non-root members in ${seconds.toFixed(1)} s`);
  operator.succeeded();
});

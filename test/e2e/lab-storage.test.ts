// lab: exclusive — a node killed.
// suite: extended — the lab's own storage: run when lab/ changes (the gate's tests on volumes need it to work).
// The lab's default StorageClass: node-local volumes from a real provisioner, which live and die with their node.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { CoreV1Api } from '@kubernetes/client-node';
import type { V1Pod } from '@kubernetes/client-node';
import { adminKubeConfig, eventually, lab, testNamespace } from '../support/lab.js';
import { inject } from '../support/faults.js';
import { claim, finishedPod, onClaim, podLog, shellPod, untilReadiness, volumeDir } from '../support/lab-pods.js';

test('a claim of the default class binds on the node where its pod lands, and is out of reach while that node is dead', async (t) => {
  const core = adminKubeConfig().makeApiClient(CoreV1Api);
  const namespace = await testNamespace(t, 'storage');
  await claim(core, namespace, 'data');
  // WaitForFirstConsumer: nothing is provisioned before a pod needs the claim.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  assert.equal((await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace })).status?.phase, 'Pending');

  // No node chosen: the scheduler places the pod, and the volume follows it.
  const writer = (name: string, script: string): V1Pod => onClaim(shellPod(name, undefined, script), 'data');
  await core.createNamespacedPod({ namespace, body: writer('first', 'echo written-on-first > /data/note') });
  const first = await finishedPod(core, namespace, 'first');
  const node = first.spec?.nodeName ?? '';
  const pvc = await core.readNamespacedPersistentVolumeClaim({ name: 'data', namespace });
  assert.equal(pvc.status?.phase, 'Bound');
  assert.equal(pvc.spec?.storageClassName, lab().storageClass, 'the default class');
  const pv = await core.readPersistentVolume({ name: pvc.spec.volumeName ?? '' });
  const affinity = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms[0]?.matchExpressions?.[0];
  assert.deepEqual({ key: affinity?.key, values: affinity?.values }, { key: 'kubernetes.io/hostname', values: [node] });
  assert.ok((await volumeDir(core, namespace, 'data')).includes(`/nodes/${node}/disk/`), 'on its node\'s disk');

  const revive = await inject(t, { kind: 'node-kill', node });
  await untilReadiness(core, node, 'Unknown');
  await core.createNamespacedPod({ namespace, body: writer('second', 'cat /data/note') });
  // Live nodes are left, but the volume is on the dead one: the pod cannot go anywhere.
  const why = await eventually('the second pod unschedulable', 60_000, async () => {
    const p = await core.readNamespacedPod({ name: 'second', namespace });
    const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
    return scheduled?.status === 'False' && scheduled.reason === 'Unschedulable' ? scheduled.message : undefined;
  });
  t.diagnostic(`scheduler: ${why}`);
  assert.match(why, /didn't match PersistentVolume's node affinity|volume node affinity conflict/);
  await new Promise((resolve) => setTimeout(resolve, 5000));
  const still = await core.readNamespacedPod({ name: 'second', namespace });
  assert.equal(still.spec?.nodeName, undefined, 'still not placed on another node');

  await revive();
  const second = await finishedPod(core, namespace, 'second', 120_000);
  assert.equal(second.spec?.nodeName, node);
  assert.equal((await podLog(core, namespace, 'second')).trim(), 'written-on-first');
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1ContainerStatus, V1Pod, V1Volume } from '@kubernetes/client-node';
import { etcdNeverRan, etcdStarted, podTrouble } from '../../src/controllers/cluster/pod-trouble.js';
import { podView } from '../../src/controllers/cluster/views.js';

const pod = (status: V1Pod['status']): V1Pod => ({ metadata: { name: 'ex-1', namespace: 'ns' }, status });
const container = (name: string, o: Partial<V1ContainerStatus>): V1ContainerStatus => ({ name, image: 'quay.io/coreos/etcd:v3.2.13', imageID: '', ready: false, restartCount: 0, ...o });

test('a pod no node fits is Unschedulable, with the scheduler\'s words and what to check', () => {
  const t = podTrouble(pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: '0/3 nodes are available: 3 node(s) didn\'t match Pod\'s node affinity/selector.' }] }));
  assert.equal(t?.reason, 'Unschedulable');
  assert.match(t.message, /^member pod ex-1 cannot be scheduled: 0\/3 nodes are available.*Check spec\.pod nodeSelector/);
});

test('the planner is told a pod is unschedulable as a fact, not only as a reason for status (issue 32, finding 6)', () => {
  const waiting = pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] });
  assert.equal(podView(waiting).unschedulable, true);
  assert.equal(podView(pod({ phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False', reason: 'SchedulerError' }] })).unschedulable, undefined);
  assert.equal(podView(pod({ phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }] })).unschedulable, undefined);
});

test('a pod its kubelet evicted is PodFailed, with the kubelet\'s words and the node', () => {
  const t = podTrouble({ metadata: { name: 'ex-1' }, spec: { nodeName: 'node-2', containers: [] }, status: { phase: 'Failed', reason: 'Evicted', message: 'The node was low on resource: ephemeral-storage.' } });
  assert.equal(t?.reason, 'PodFailed');
  assert.equal(t.message, 'member pod ex-1 failed (Evicted: The node was low on resource: ephemeral-storage.) on node node-2');
});

test('an image that cannot be pulled names the image, the kubelet\'s reason, and the fields that make it', () => {
  const t = podTrouble(pod({ phase: 'Pending', containerStatuses: [container('etcd', { state: { waiting: { reason: 'ImagePullBackOff', message: 'Back-off pulling image' } } })] }));
  assert.equal(t?.reason, 'ImagePullFailed');
  assert.match(t.message, /member pod ex-1 cannot pull image quay\.io\/coreos\/etcd:v3\.2\.13 \(ImagePullBackOff: Back-off pulling image\).*spec\.repository:v<spec\.version>/);
});

test('a crash loop names the container, its last exit, and the command that shows why; the data guard\'s refusal is not one', () => {
  const crashing = (name: string, exitCode: number): V1Pod => pod({ phase: 'Running', initContainerStatuses: [container(name, {
    restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode, reason: 'Error' } },
  })] });
  const t = podTrouble(crashing('restore-snapshot', 1));
  assert.equal(t?.reason, 'CrashLooping');
  assert.match(t.message, /container restore-snapshot of member pod ex-1 keeps failing \(restarted 4 times; last exit code 1 \(Error\)\): see kubectl logs -n ns ex-1 -c restore-snapshot --previous/);
  assert.equal(podTrouble(crashing('data-guard', 3)), undefined);
});

test('data the pod\'s user cannot use (a volume that did not apply fsGroup) is ContainerFailed with the data guard\'s words', () => {
  const msg = 'the data directory /var/etcd/data is not usable by user 65532 (EACCES): the volume did not apply the pod\'s fsGroup; make it the pod user\'s';
  const t = podTrouble(pod({ phase: 'Pending', initContainerStatuses: [container('data-guard', {
    restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } },
    lastState: { terminated: { exitCode: 5, reason: 'Error', message: `${JSON.stringify({ component: 'data-guard', msg })}\n` } },
  })] }));
  assert.equal(t?.reason, 'ContainerFailed');
  assert.equal(t.message, `member pod ex-1 cannot use its data: ${msg}`);
});

test('a member that crash-loops on a full disk is DiskFull, saying where its data is and what to do (issue 32, finding 14)', () => {
  // etcd 3.5's last line, as the kubelet keeps the log's tail (FallbackToLogsOnError).
  const lastWords = '{"level":"fatal","ts":"2026-11-22T10:00:00.000Z","caller":"etcdserver/raft.go:265","msg":"failed to save Raft hard state and entries",'
    + '"error":"write /var/etcd/data/member/wal/0000000000000002-0000000000004e21.wal: no space left on device"}\n';
  const crashing = (volume: V1Volume, message: string): V1Pod => ({
    metadata: { name: 'ex-1', namespace: 'ns' }, spec: { nodeName: 'node-2', containers: [], volumes: [volume] },
    status: { phase: 'Running', containerStatuses: [container('etcd', {
      restartCount: 5, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1, reason: 'Error', message } },
    })] },
  });
  const onClaim = podTrouble(crashing({ name: 'data', persistentVolumeClaim: { claimName: 'ex-1' } }, lastWords));
  assert.equal(onClaim?.reason, 'DiskFull');
  assert.match(onClaim.message, /^container etcd of member pod ex-1 keeps failing with "no space left on device" \(restarted 5 times\): its volume \(claim ex-1\) is full: grow it/);
  assert.match(onClaim.message, /kubectl patch pvc -n ns ex-1 .*spec\.quotaBackendBytes well below the volume's size/);
  const onNode = podTrouble(crashing({ name: 'data', emptyDir: {} }, lastWords));
  assert.match(onNode?.message ?? '', /its data is on an emptyDir, on node node-2's disk, which is full/);
  assert.equal(podTrouble(crashing({ name: 'data', emptyDir: {} }, 'panic: bad flag\n'))?.reason, 'CrashLooping', 'any other crash is as before');
});

test('a running pod has no trouble; its etcd has run', () => {
  const running = pod({ phase: 'Running', containerStatuses: [container('etcd', { ready: true, state: { running: {} } })] });
  assert.equal(podTrouble(running), undefined);
  assert.equal(etcdNeverRan(running), false);
  assert.equal(etcdNeverRan(pod({ phase: 'Pending', containerStatuses: [container('etcd', { state: { waiting: { reason: 'ErrImagePull' } } })] })), true);
  assert.equal(etcdNeverRan(pod({ phase: 'Running', containerStatuses: [container('etcd', { restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } } })] })), false);
});

test('a start is recorded only on evidence of one: a never-started container shown terminated as its pod is deleted is no run', () => {
  assert.equal(etcdStarted(pod({ phase: 'Running', containerStatuses: [container('etcd', { state: { running: { startedAt: new Date() } } })] })), true);
  assert.equal(etcdStarted(pod({ phase: 'Running', containerStatuses: [container('etcd', { restartCount: 2, state: { waiting: { reason: 'CrashLoopBackOff' } } })] })), true);
  assert.equal(etcdStarted(pod({ phase: 'Failed', containerStatuses: [container('etcd', { state: { terminated: { exitCode: 1, startedAt: new Date(), finishedAt: new Date() } } })] })), true);
  assert.equal(etcdStarted(pod({ phase: 'Pending', containerStatuses: [container('etcd', { state: { waiting: { reason: 'ErrImageNeverPull' } } })] })), false);
  assert.equal(etcdStarted(pod({ phase: 'Failed', containerStatuses: [container('etcd', { state: { terminated: { exitCode: 137, reason: 'ContainerStatusUnknown' } } })] })), false);
  assert.equal(etcdStarted(pod({ phase: 'Pending' })), false);
  // As the API server sends it: the start time null, not absent.
  const unknown = JSON.parse('{"name":"etcd","ready":false,"restartCount":0,"image":"i","imageID":"","state":{"terminated":{"exitCode":137,"reason":"ContainerStatusUnknown","startedAt":null,"finishedAt":null}}}') as V1ContainerStatus;
  assert.equal(etcdStarted(pod({ phase: 'Failed', containerStatuses: [unknown] })), false);
});

test('a restore\'s fetch step that refused its backup, restarted by the kubelet, is no crash loop: the cluster says the backup was refused, and why', () => {
  const refused = { terminated: { exitCode: 4, message: '{"reason":"ChecksumMismatch","message":"x"}' } };
  const looping = pod({ phase: 'Pending', initContainerStatuses: [container('fetch-snapshot', { restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: refused })] });
  assert.deepEqual(podTrouble(looping), { reason: 'BackupRefused', message: 'member pod ex-1 refused the backup it restores from (ChecksumMismatch: x); this cluster never starts from it: delete it, and restore from another backup' });
  // Failing otherwise (a store that does not answer), it is one.
  const failing = pod({ phase: 'Pending', initContainerStatuses: [container('fetch-snapshot', { restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 1 } } })] });
  assert.equal(podTrouble(failing)?.reason, 'CrashLooping');
});

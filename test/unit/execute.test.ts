import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { createLogger } from '../../src/runtime/log.js';
import { STEADY_LOOK_MS, UNANSWERED_LOOK_MS, execute, pollingBounded } from '../../src/controllers/cluster/execute.js';
import { Durations } from '../../src/runtime/durations.js';
import type { ExecutionContext } from '../../src/controllers/cluster/execute.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import { EtcdError } from '../../src/etcd/client.js';
import type { EtcdClient } from '../../src/etcd/client.js';
import { ApiError } from '../../src/runtime/transport.js';
import type { ApiTransport } from '../../src/runtime/transport.js';
import { DATA_GUARD, RESTORE_STEP } from '../../src/k8s/member-pod.js';

/** An execution context whose API server takes every write, recording the pods posted. */
function context(posted: V1Pod[]): ExecutionContext {
  const transport = {
    call: (method: string, path: string, body: unknown) => {
      if (method === 'POST' && path.endsWith('/pods')) posted.push(body as V1Pod);
      return Promise.resolve({});
    },
  } as unknown as ApiTransport;
  const cluster = {
    apiVersion: 'etcd.database.coreos.com/v1beta2', kind: 'EtcdCluster', metadata: { name: 'ex', namespace: 'ns', uid: 'u1', generation: 1 },
    spec: { size: 3, version: '3.5.17', pod: { persistentVolumeClaimSpec: { resources: { requests: { storage: '1Gi' } } } } },
  } as unknown as EtcdCluster;
  return {
    transport, etcd: {} as EtcdClient, cluster, address: { cluster: 'ex', namespace: 'ns', domain: 'cluster.local', tls: false }, pods: [], statuses: new Map(),
    operator: { image: 'op:dev', corruptCheckSeconds: 600 }, restore: { s3: { path: 'b/k', awsSecret: 'aws' } }, log: createLogger('silent'),
  };
}

test('a restore\'s resumed bootstrap restarts a founder that ran on its data: no restore over it, and its data guard expects data (issue 32, review 4)', async () => {
  const posted: V1Pod[] = [];
  await execute({ type: 'ResumeBootstrap', initialMembers: ['a', 'b'], missing: ['a', 'b'], ran: ['a'], version: '3.5.17' }, context(posted));
  const steps = (name: string): string[] => posted.find((p) => p.metadata?.name === name)?.spec?.initContainers?.map((c) => c.name) ?? [];
  const guardArgs = (name: string): string[] => posted.find((p) => p.metadata?.name === name)?.spec?.initContainers?.find((c) => c.name === DATA_GUARD)?.args ?? [];
  assert.ok(!steps('a').includes(RESTORE_STEP), `a ran: ${steps('a').join(', ')}`);
  assert.ok(guardArgs('a').includes('--expect-data'));
  assert.ok(steps('b').includes(RESTORE_STEP), 'b never ran: it restores the snapshot');
  assert.ok(!guardArgs('b').includes('--expect-data'));
});

test('a metadata patch goes to the pod as a merge patch carrying the resourceVersion observed; a conflict is "not now", a pod gone is no error (issue 33)', async () => {
  const calls: { method: string; path: string; body: unknown; type?: string }[] = [];
  let answer: () => Promise<unknown> = () => Promise.resolve({});
  const x = context([]);
  x.transport = { call: (method: string, path: string, body: unknown, type?: string) => { calls.push({ method, path, body, type }); return answer(); } } as unknown as ApiTransport;
  x.cluster = { ...x.cluster, spec: { ...x.cluster.spec, pod: { labels: { team: 'db' } } } };
  x.pods = [{ metadata: { name: 'ex-1', resourceVersion: '7', labels: { app: 'etcd', etcd_cluster: 'ex' }, annotations: {} } }];
  const action = { type: 'PatchPodMetadata' as const, member: 'ex-1', recordTemplate: 't1', reason: 'r' };
  assert.deepEqual(await execute(action, x), { requeueAfterMs: 200 });
  assert.deepEqual(calls, [{
    method: 'PATCH', path: '/api/v1/namespaces/ns/pods/ex-1', type: 'application/merge-patch+json',
    body: { metadata: { resourceVersion: '7', labels: { team: 'db' }, annotations: {
      'etcd.database.coreos.com/user-labels': 'team', 'etcd.database.coreos.com/user-annotations': null, 'etcd.database.coreos.com/pod-template': 't1',
    } } },
  }]);
  answer = () => Promise.reject(new ApiError(409, 'Conflict', 'the object has been modified'));
  assert.deepEqual(await execute(action, x), { requeueAfterMs: 1000, refused: 'the object has been modified' });
  answer = () => Promise.reject(new ApiError(404, 'NotFound', 'pods "ex-1" not found'));
  assert.deepEqual(await execute(action, x), { requeueAfterMs: 200 });
  calls.length = 0;
  assert.deepEqual(await execute({ ...action, member: 'ex-2' }, x), { requeueAfterMs: 200 }, 'a pod not observed is the next pass\'s to see');
  assert.equal(calls.length, 0);
});

test('a membership change in flight is looked at again within 250 ms: a new member starting, a learner catching up, and etcd\'s "not now" to an add or a promotion (issue 36); any other wait at 2 s', async () => {
  const x = context([]);
  const wait = (awaiting: 'MembersStarting' | 'CatchingUp' | 'PodStopping') => execute({ type: 'Wait', awaiting, members: ['ex-1'], reason: 'r' }, x);
  assert.deepEqual(await wait('MembersStarting'), { requeueAfterMs: 250 });
  assert.deepEqual(await wait('CatchingUp'), { requeueAfterMs: 250 });
  assert.deepEqual(await wait('PodStopping'), { requeueAfterMs: 2000 });
  x.statuses = new Map([['ex-1', { memberId: '1', leaderId: '1' } as never]]);
  x.etcd = {
    memberAdd: () => Promise.reject(new EtcdError('http://l:2379', 'etcdserver: unhealthy cluster')),
    memberPromote: () => Promise.reject(new EtcdError('http://l:2379', 'etcdserver: can only promote a learner member which is in sync with leader')),
    moveLeader: () => Promise.reject(new EtcdError('http://l:2379', 'etcdserver: unhealthy cluster')),
  } as unknown as EtcdClient;
  assert.deepEqual(await execute({ type: 'AddMember', learner: true, version: '3.5.17', reason: 'r' }, x), { requeueAfterMs: 250, refused: 'http://l:2379: etcdserver: unhealthy cluster' });
  assert.deepEqual(await execute({ type: 'PromoteLearner', memberId: '2', member: 'ex-2' }, x),
    { requeueAfterMs: 250, refused: 'http://l:2379: etcdserver: can only promote a learner member which is in sync with leader' });
  assert.deepEqual(await execute({ type: 'MoveLeader', toMemberId: '2', to: 'ex-2', reason: 'r' }, x), { requeueAfterMs: 1000, refused: 'http://l:2379: etcdserver: unhealthy cluster' }, 'not a membership change');
});

test('a membership step is polled at 250 ms for 15 s at most, counted across passes while it is the same step; then every 2 s; a new step polls again (issue 36 review)', () => {
  const polled = new Durations();
  const starting = { type: 'Wait' as const, awaiting: 'MembersStarting' as const, members: ['ex-4'], reason: 'r' };
  assert.equal(pollingBounded(polled, 'ns/ex', starting, 250, 0), 250);
  assert.equal(pollingBounded(polled, 'ns/ex', starting, 250, 14_000), 250);
  assert.equal(pollingBounded(polled, 'ns/ex', starting, 250, 16_000), 2000, 'a pod that never starts is no reason to poll four times a second');
  const next = { ...starting, members: ['ex-5'] };
  assert.equal(pollingBounded(polled, 'ns/ex', next, 250, 17_000), 250, 'the next member is polled afresh');
  assert.equal(pollingBounded(polled, 'ns/ex', { type: 'Steady' }, 10_000, 18_000), 10_000, 'other requeues are left as they are');
  assert.equal(pollingBounded(polled, 'ns/ex', next, 250, 19_000), 250, 'and a step that breaks off counts from its return');
});

test('a steady cluster is looked at again after the steady look when every member answered, after the unanswered look while a Ready member did not (its silence is timed at these looks)', async () => {
  const x = context([]);
  const pod = (name: string, leaving = false): V1Pod => ({ metadata: { name, ...(leaving ? { deletionTimestamp: new Date() } : {}) } });
  const answered = { memberId: '1', leaderId: '1' } as never;
  x.members = [{ ID: '1', name: 'ex-1' }, { ID: '2', name: 'ex-2' }] as never;
  x.pods = [pod('ex-1'), pod('ex-2'), pod('ex-3', true)];
  x.statuses = new Map([['ex-1', answered], ['ex-2', answered]]);
  assert.deepEqual(await execute({ type: 'Steady' }, x), { requeueAfterMs: STEADY_LOOK_MS }, 'a pod on its way out need not answer');
  x.statuses = new Map([['ex-1', answered]]);
  assert.deepEqual(await execute({ type: 'Steady' }, x), { requeueAfterMs: UNANSWERED_LOOK_MS });
  x.statuses = new Map([['ex-1', answered], ['ex-2', answered]]);
  x.members = undefined;
  assert.deepEqual(await execute({ type: 'Steady' }, x), { requeueAfterMs: UNANSWERED_LOOK_MS }, 'no member list: nothing is known to answer');
});

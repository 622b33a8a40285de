import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { execute } from '../../src/controllers/cluster/execute.js';
import type { ExecutionContext } from '../../src/controllers/cluster/execute.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
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
    operator: { image: 'op:dev', corruptCheckSeconds: 600 }, restore: { s3: { path: 'b/k', awsSecret: 'aws' } }, log: pino({ level: 'silent' }),
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

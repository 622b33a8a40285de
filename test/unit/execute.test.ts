import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1Pod } from '@kubernetes/client-node';
import { pino } from 'pino';
import { execute } from '../../src/controllers/cluster/execute.js';
import type { ExecutionContext } from '../../src/controllers/cluster/execute.js';
import type { EtcdCluster } from '../../src/api/etcd-cluster.js';
import type { EtcdClient } from '../../src/etcd/client.js';
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
    transport, etcd: {} as EtcdClient, cluster, address: { cluster: 'ex', namespace: 'ns', domain: 'cluster.local', tls: false }, statuses: new Map(),
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

import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import { claimGrowth, growClaims, growthCondition, largestQuantity } from '../../src/controllers/cluster/volume-growth.js';
import { ApiError } from '../../src/runtime/transport.js';
import type { ApiTransport } from '../../src/runtime/transport.js';
import type { ClusterSpec } from '../../src/api/etcd-cluster.js';

const claim = (name: string, requested: string, capacity?: string, o: Partial<V1PersistentVolumeClaim> = {}): V1PersistentVolumeClaim => ({
  metadata: { name, annotations: {} }, spec: { resources: { requests: { storage: requested } } },
  status: capacity ? { phase: 'Bound', capacity: { storage: capacity } } : { phase: 'Pending' }, ...o,
});
const spec = (storage: string): ClusterSpec => ({ size: 3, pod: { persistentVolumeClaimSpec: { resources: { requests: { storage } } } } });

test('claims below the spec\'s storage request are grown, whatever form the API server wrote their quantity in; removed members\' claims are left', () => {
  const removed = claim('d', '1Gi', '1Gi', { metadata: { name: 'd', annotations: { 'etcd.database.coreos.com/member-removed': '2026-11-27T08:00:00Z' } } });
  const growth = claimGrowth(spec('2Gi'), [claim('a', '1Gi', '1Gi'), claim('b', '2048Mi', '2Gi'), claim('c', '1073741824', '1Gi'), removed]);
  assert.ok(growth);
  assert.deepEqual(growth.below.map((c) => c.metadata?.name), ['a', 'c']);
  assert.deepEqual(growth.active.map((c) => c.metadata?.name), ['a', 'b', 'c']);
  assert.equal(claimGrowth({ size: 3 }, [claim('a', '1Gi', '1Gi')]), undefined, 'members on emptyDir have no claims to grow');
});

test('the VolumeGrowth condition: refused with what to do, a file system waiting for a restart, growing, then at size; absent when nothing ever grew', () => {
  const refused = growthCondition('2Gi', [claim('a', '1Gi', '1Gi')], [{ claim: claim('a', '1Gi', '1Gi'), why: 'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize' }], 'ns', false);
  assert.equal(refused?.reason, 'ExpansionRefused');
  assert.match(refused.message ?? '', /^claims a cannot grow to 2Gi: only dynamically provisioned pvc.*allowVolumeExpansion: true/);
  const fsPending = claim('b', '2Gi', '1Gi', { status: { phase: 'Bound', capacity: { storage: '1Gi' }, conditions: [{ type: 'FileSystemResizePending', status: 'True' }] } });
  const pending = growthCondition('2Gi', [claim('a', '2Gi', '2Gi'), fsPending], [], 'ns', true);
  assert.equal(pending?.reason, 'FileSystemResizePending');
  assert.match(pending.message ?? '', /kubectl delete pod -n ns b/);
  assert.match(pending.message ?? '', /one member at a time/);
  assert.match(growthCondition('2Gi', [fsPending], [], 'ns', true)?.message ?? '', /one-member cluster serves nothing meanwhile/, 'alone, its restart is an outage: said so');
  // Marked pending a minute ago: kubelet grows a mounted file system at its next sync of the pod, so it is growing still.
  const now = Date.parse('2026-11-27T12:00:00Z');
  const since = (at: string): V1PersistentVolumeClaim => claim('b', '2Gi', '1Gi', { status: { phase: 'Bound', capacity: { storage: '2Gi' }, conditions: [{ type: 'FileSystemResizePending', status: 'True', lastTransitionTime: new Date(at) }] } });
  assert.equal(growthCondition('2Gi', [since('2026-11-27T11:59:00Z')], [], 'ns', true, now)?.reason, 'Expanding', 'within the grace kubelet may still grow it online');
  assert.equal(growthCondition('2Gi', [since('2026-11-27T11:50:00Z')], [], 'ns', true, now)?.reason, 'FileSystemResizePending', 'past it, a restart finishes it');
  assert.deepEqual(growthCondition('2Gi', [claim('a', '2Gi', '1Gi'), claim('n', '2Gi')], [], 'ns', true),
    { type: 'VolumeGrowth', status: 'False', reason: 'Expanding', message: 'claims a are growing to 2Gi, online (a file system when kubelet next syncs its pod), nothing restarted' }, 'a claim not bound yet is not judged');
  assert.deepEqual(growthCondition('2Gi', [claim('a', '2Gi', '2Gi')], [], 'ns', true), { type: 'VolumeGrowth', status: 'True', reason: 'AtRequestedSize', message: 'every member\'s claim holds 2Gi' });
  assert.equal(growthCondition('2Gi', [claim('a', '2Gi', '2Gi')], [], 'ns', false), undefined);
});

test('the largest request among the claims (the floor of the spec\'s, whatever form its quantity was written in)', () => {
  assert.equal(largestQuantity(['1Gi', '2048Mi', 1073741824, undefined]), '2048Mi');
  assert.equal(largestQuantity([]), undefined, 'no claims, no floor');
});

test('the floor status reports is what the volumes hold: a raise patched onto the claims or refused leaves it, a growth done raises it; a request taken back below a claim\'s unfinished growth takes the claim back too', async () => {
  const address = { cluster: 'ex', namespace: 'ns', domain: 'cluster.local', tls: false };
  const patched: string[] = [];
  const transport = (refuse: boolean): ApiTransport => ({
    call: (_method: string, path: string, body: unknown) => {
      if (refuse) return Promise.reject(new ApiError(403, 'Forbidden', 'only dynamically provisioned pvc can be resized'));
      patched.push(`${path.split('/').pop() ?? ''} ${JSON.stringify(body)}`);
      return Promise.resolve({});
    },
  }) as unknown as ApiTransport;
  const own = [claim('a', '1Gi', '1Gi'), claim('b', '1Gi', '1Gi')];
  const grown = await growClaims(transport(false), address, spec('2Gi'), own, false);
  assert.equal(grown.claimed, '1Gi', 'patched, not grown yet');
  assert.equal(grown.condition?.reason, 'Expanding');
  assert.equal((await growClaims(transport(false), address, spec('2Gi'), [claim('a', '2Gi', '2Gi'), claim('b', '2Gi', '1Gi')], true)).claimed, '2Gi');
  const refused = await growClaims(transport(true), address, spec('2Gi'), own, false);
  assert.equal(refused.claimed, '1Gi', 'the request can be taken back to the claims\' size');
  assert.equal(refused.condition?.reason, 'ExpansionRefused');
  // A growth to 20Ti that failed, taken back to 2Gi: the claims follow (above their 1Gi, as Kubernetes requires).
  patched.length = 0;
  const failing = claim('a', '20Ti', '1Gi', { status: { phase: 'Bound', capacity: { storage: '1Gi' }, conditions: [{ type: 'NodeResizeError', status: 'True', message: 'file too large' }] } });
  await growClaims(transport(false), address, spec('2Gi'), [failing, claim('b', '2Gi', '2Gi')], true);
  assert.deepEqual(patched, ['a {"spec":{"resources":{"requests":{"storage":"2Gi"}}}}']);
  patched.length = 0;
  await growClaims(transport(false), address, spec('1Gi'), [failing], true);
  assert.deepEqual(patched, [], 'not down to its capacity: Kubernetes refuses that');
});

test('a growth the resizer or kubelet failed is ExpansionFailed, with their words and how to cancel it, never a restart', () => {
  const failing = claim('a', '20Ti', '1Gi', { status: { phase: 'Bound', capacity: { storage: '1Gi' }, conditions: [
    { type: 'NodeResizeError', status: 'True', message: 'truncate a.img: file too large' }, { type: 'FileSystemResizePending', status: 'True', lastTransitionTime: new Date(0) },
  ] } });
  const c = growthCondition('20Ti', [failing, claim('b', '20Ti', '1Gi')], [], 'ns', true);
  assert.equal(c?.reason, 'ExpansionFailed');
  assert.match(c.message ?? '', /^claims a could not grow to 20Ti: truncate a\.img: file too large\. Nothing was restarted.*set the storage request back to more than 1Gi/);
  assert.doesNotMatch(c.message ?? '', /kubectl delete pod/);
  const infeasible = claim('a', '20Ti', '1Gi', { status: { phase: 'Bound', capacity: { storage: '1Gi' }, allocatedResourceStatuses: { storage: 'ControllerResizeInfeasible' } } });
  assert.equal(growthCondition('20Ti', [infeasible], [], 'ns', true)?.reason, 'ExpansionFailed');
  assert.equal(growthCondition('2Gi', [claim('a', '3Gi', '3Gi')], [], 'ns', true)?.message, 'every member\'s claim holds 2Gi or more (the largest 3Gi: Kubernetes does not shrink a volume)');
});

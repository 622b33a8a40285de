import { test } from 'node:test';
import assert from 'node:assert/strict';
import { irreversible } from '../../src/controllers/cluster/irreversible.js';

test('a pod deleted for not being a member is confirmed on a fresh member list first, like a forced deletion; a restart on its data is not', () => {
  assert.equal(irreversible({ type: 'DeletePod', member: 'x', deleteClaim: false, reason: 'pod is not a member of the cluster', notMember: true }), true);
  assert.equal(irreversible({ type: 'DeletePod', member: 'x', deleteClaim: false, reason: 'removed; node lost', force: true }), true);
  assert.equal(irreversible({ type: 'DeletePod', member: 'x', deleteClaim: false, reason: 'restarting it on its data' }), false);
  assert.equal(irreversible({ type: 'DeleteClaim', member: 'x', reason: 'grace period over' }), true);
  assert.equal(irreversible({ type: 'PatchPodMetadata', member: 'x', reason: 'labels', recordTemplate: 't' }), false, 'a metadata patch is made again from the spec at will');
});

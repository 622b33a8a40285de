import { test } from 'node:test';
import assert from 'node:assert/strict';
import { actionEvent } from '../../src/controllers/cluster/action-event.js';

test('a blocked plan is told as a Warning under its cause; other actions under their type', () => {
  assert.deepEqual(actionEvent({ type: 'Blocked', cause: 'UnrecordedBootstrap', reason: 'pods x of this cluster …' }), { type: 'Warning', reason: 'UnrecordedBootstrap' });
  assert.deepEqual(actionEvent({ type: 'QuorumLost', reason: 'gone' }), { type: 'Warning', reason: 'QuorumLost' });
  assert.deepEqual(actionEvent({ type: 'AddMember', learner: true, version: '3.5.17', reason: 'scaling up to 3' }), { type: 'Normal', reason: 'AddMember' });
  assert.deepEqual(actionEvent({ type: 'PatchPodMetadata', member: 'b', reason: 'applying the spec.pod labels and annotations: no restart' }), { type: 'Normal', reason: 'PatchPodMetadata' });
});

import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RefusedSteps } from '../../src/controllers/cluster/refused-steps.js';
import type { Action } from '../../src/etcd/planner.js';

const add: Action = { type: 'AddMember', learner: true, version: '3.5.35', reason: 'scaling up to 5' };
const promote: Action = { type: 'PromoteLearner', memberId: '7', member: 'ex-1' };

test('a step etcd refuses for now is news when first refused, when its words change, and when taken; its retries are not', () => {
  const steps = new RefusedSteps();
  assert.equal(steps.retrying('ns/ex', add), false, 'a first try');
  assert.deepEqual(steps.record('ns/ex', add, 'etcdserver: unhealthy cluster', 1000), { kind: 'refused', refusal: 'etcdserver: unhealthy cluster' });
  assert.equal(steps.retrying('ns/ex', add), true);
  assert.equal(steps.record('ns/ex', add, 'etcdserver: unhealthy cluster', 1250), undefined, 'the same words again');
  assert.deepEqual(steps.record('ns/ex', add, 'etcdserver: too many learner members in cluster', 1500), { kind: 'refused', refusal: 'etcdserver: too many learner members in cluster' });
  assert.deepEqual(steps.record('ns/ex', add, undefined, 4000), { kind: 'accepted', attempts: 4, waitedMs: 3000 });
  assert.equal(steps.retrying('ns/ex', add), false, 'taken: a next add is a new step');
});

test('another step, or another cluster, is no retry; a step taken at once is no news', () => {
  const steps = new RefusedSteps();
  steps.record('ns/ex', add, 'etcdserver: unhealthy cluster', 0);
  assert.equal(steps.retrying('ns/ex', promote), false);
  assert.equal(steps.retrying('ns/other', add), false);
  assert.equal(steps.record('ns/ex', promote, undefined, 10), undefined, 'another step, taken at once');
  assert.deepEqual(steps.record('ns/ex', promote, 'etcdserver: can only promote a learner member which is in sync with leader', 20),
    { kind: 'refused', refusal: 'etcdserver: can only promote a learner member which is in sync with leader' }, 'a different step refused: news, though the last was refused too');
  steps.forget('ns/ex');
  assert.equal(steps.retrying('ns/ex', promote), false);
});

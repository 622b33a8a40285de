import { test } from 'node:test';
import assert from 'node:assert/strict';
import { leftClaimsCondition } from '../../src/controllers/cluster/left-claims.js';
import { conditionEvents } from '../../src/controllers/cluster/condition-events.js';

const claim = (name: string, neverRan: boolean, incarnation = 'u1') => ({ name, removed: false, incarnation, neverRan, createdMs: 0 });

test('claims an earlier cluster of the name left unused are named in a lasting condition, with the command to delete them (issue 32, trial)', () => {
  const left = leftClaimsCondition(true, [claim('q', true), claim('p', false)]);
  assert.deepEqual([left?.type, left?.status, left?.reason], ['ClaimsLeft', 'True', 'EarlierClaimsKept']);
  assert.match(left?.message ?? '', /^claims p \(of cluster u1\), q \(says its member never ran\) of an earlier EtcdCluster/);
  assert.match(left?.message ?? '', /kubectl delete pvc p q$/);
  assert.equal(leftClaimsCondition(false, [claim('q', true)]), undefined, 'before the bootstrap they are candidates, not left');
  assert.equal(leftClaimsCondition(true, []), undefined);
  const now = '2026-11-27T00:00:00Z';
  const status = left ? { conditions: [{ ...left, lastTransitionTime: now }] } : {};
  assert.deepEqual(conditionEvents({}, status).map((e) => [e.type, e.reason]), [['Normal', 'EarlierClaimsKept']], 'told once as it appears');
  assert.deepEqual(conditionEvents(status, status), []);
});

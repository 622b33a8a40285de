import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SHORT_SECONDS, UNMEASURED_SECONDS, runOrder } from '../support/file-order.js';

test('test files start longest first, those waiting for a tool built late after the long ones, short ones last', () => {
  const order = runOrder([
    { path: 'unit/a', seconds: 1, late: false },
    { path: 'e2e/monitoring', seconds: 500, late: true },
    { path: 'e2e/short', seconds: SHORT_SECONDS - 1, late: false },
    { path: 'e2e/node-loss', seconds: 470, late: false },
    { path: 'e2e/new', seconds: undefined, late: false },
    { path: 'e2e/upgrade', seconds: 300, late: false },
    { path: 'integration/alert-rules', seconds: 5, late: true },
  ]);
  assert.deepEqual(order, ['e2e/node-loss', 'e2e/upgrade', 'e2e/new', 'e2e/monitoring', 'integration/alert-rules', 'e2e/short', 'unit/a']);
});

test('a file not measured yet counts among the long ones; ties go by path, the same on every run', () => {
  const order = runOrder([
    { path: 'b', seconds: UNMEASURED_SECONDS, late: false },
    { path: 'c', seconds: undefined, late: false },
    { path: 'a', seconds: UNMEASURED_SECONDS, late: false },
  ]);
  assert.deepEqual(order, ['a', 'b', 'c']);
});

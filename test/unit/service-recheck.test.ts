import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SERVICE_CONNECT_WITHIN_MS, SERVICE_RECHECK_FOR_MS, SERVICE_RECHECK_MS, serviceRecheck } from '../../src/controllers/restore/service-recheck.js';
import { timeMs } from '../../src/runtime/time.js';

test('a restore waiting only for its client Service looks often, each connection bounded, for 15 s from when it could be routed; then at its usual pace, unbounded', () => {
  const since = Date.parse('2026-11-29T14:00:00Z');
  const soon = { recheckInMs: SERVICE_RECHECK_MS, connectWithinMs: SERVICE_CONNECT_WITHIN_MS };
  assert.deepEqual(serviceRecheck(since, since), soon);
  assert.deepEqual(serviceRecheck(since, since + SERVICE_RECHECK_FOR_MS - 1), soon);
  // After the window no bound: an operator whose connections are slow to make would otherwise wait for ever.
  assert.deepEqual(serviceRecheck(since, since + SERVICE_RECHECK_FOR_MS), {});
  assert.deepEqual(serviceRecheck(since, since + 3_600_000), {});
  // A node's clock a little ahead still counts; a start far ahead is skew, not a time to wait from.
  assert.deepEqual(serviceRecheck(since + 500, since), soon);
  assert.deepEqual(serviceRecheck(since + 60_000, since), {});
});

test('Kubernetes times are read as they come from the API (strings) or as typed (Dates); absent or unreadable is 0', () => {
  assert.equal(timeMs('2026-11-29T14:00:01Z'), Date.parse('2026-11-29T14:00:01Z'));
  assert.equal(timeMs(new Date(5000)), 5000);
  assert.equal(timeMs(undefined), 0);
  assert.equal(timeMs('not a time'), 0);
});

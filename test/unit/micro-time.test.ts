import { test } from 'node:test';
import assert from 'node:assert/strict';
import { microTime } from '../../src/runtime/leader-election.js';

test('lease timestamps are MicroTime: RFC 3339 with six fractional digits', () => {
  assert.equal(microTime(Date.UTC(2026, 10, 21, 23, 45, 5, 123)), '2026-11-21T23:45:05.123000Z');
});
